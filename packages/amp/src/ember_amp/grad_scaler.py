"""``torch.amp.GradScaler``: loss scaling for float16 training, with step skipping.

Works with any optimizer by duck typing (``param_groups``, ``step``); an optimizer that sets
``_step_supports_amp_scaling`` (PyTorch's fused optimizers) is handed ``grad_scale`` and
``found_inf`` as attributes and unscales and skips inside its own fused kernel.

>>> import ember_tensor as torch
>>> import ember_autograd
>>> scaler = GradScaler("cpu", init_scale=4.0)
>>> w = torch.ones(2, requires_grad=True)
>>> scaler.scale((w * 3).sum()).backward()
>>> w.grad
tensor([12., 12.])
"""
import inspect
import warnings
from collections import abc, defaultdict
from enum import Enum

import ember_autograd
import ember_tensor
from ember_tensor import Tensor

__all__ = ["OptState", "GradScaler"]


class _MultiDeviceReplicator:
    """A tensor and its copies on other devices, made once each."""

    def __init__(self, master_tensor):
        self.master = master_tensor
        self._per_device_tensors = {}

    def get(self, device):
        retval = self._per_device_tensors.get(device)
        if retval is None:
            retval = self.master.to(device=device, non_blocking=True, copy=True)
            self._per_device_tensors[device] = retval
        return retval


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scales the loss so that float16 gradients do not underflow, unscales them before the
    optimizer's step, skips steps whose gradients hold inf or nan, and adjusts the scale.

    Args:
        device: 'cuda' (default) or 'cpu'.
        init_scale: the first scale factor.
        growth_factor: the scale is multiplied by it after `growth_interval` clean steps.
        backoff_factor: the scale is multiplied by it on a step that found inf or nan.
        growth_interval: clean steps in a row before the scale grows.
        enabled: False makes every method a pass-through (``step`` just steps).

    Usage, as in PyTorch::

        scaler = torch.amp.GradScaler("cuda")
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not ember_tensor.cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = ember_tensor.full((), self._init_scale, dtype=ember_tensor.float32, device=dev)
        self._growth_tracker = ember_tensor.full((), self._init_growth_tracker, dtype=ember_tensor.int32,
                                                 device=dev)

    def scale(self, outputs):
        """`outputs` (a tensor, or an iterable of them) multiplied by the scale factor."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)
        stash = []

        def apply_scale(val):
            if isinstance(val, Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                return type(val)(iterable) if isinstance(val, (list, tuple)) else iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        per_device_and_dtype_grads = defaultdict(lambda: defaultdict(list))
        with ember_autograd.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    if (not allow_fp16) and param.grad.dtype == ember_tensor.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grad = param.grad
                    per_device_and_dtype_grads[grad.device][grad.dtype].append(grad)
            for device, per_dtype_grads in per_device_and_dtype_grads.items():
                for grads in per_dtype_grads.values():
                    # One call per device and dtype, one pass over each gradient (multiply and
                    # look for inf/nan together; on CUDA one multi-tensor kernel launch);
                    # found_inf stays on the device.
                    ember_tensor._amp_foreach_non_finite_check_and_unscale_(
                        grads, per_device_found_inf.get(device), per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer):
        """Divide `optimizer`'s gradients by the scale in place (once per step), recording
        whether any is inf or nan. Call it before clipping gradients."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = ember_tensor.full((), 0.0, dtype=ember_tensor.float32, device=self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state, *args, **kwargs):
        if not sum(v.item() for v in optimizer_state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless `unscale_` was called) and call ``optimizer.step(*args, **kwargs)``
        unless a gradient held inf or nan; returns what ``step`` returned (None if skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._fused_step(optimizer, optimizer_state, args, kwargs)
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def _fused_step(self, optimizer, optimizer_state, args, kwargs):
        """An optimizer that unscales and skips inside its own kernel: hand it the scale and
        the inf flag as ``grad_scale``/``found_inf`` attributes (PyTorch's protocol)."""
        has_grad_scaler_kwarg = "grad_scaler" in inspect.signature(optimizer.step).parameters
        if has_grad_scaler_kwarg:
            warnings.warn(
                "GradScaler is going to stop passing itself as a keyword argument to the passed "
                "optimizer. In the near future GradScaler registers `grad_scale: Tensor` and "
                "`found_inf: Tensor` to the passed optimizer and let the optimizer use them directly.",
                FutureWarning, stacklevel=3)
            kwargs = {**kwargs, "grad_scaler": self}
        else:
            if optimizer_state["stage"] is OptState.READY:
                self._check_inf_per_device(optimizer)
            scaler = self._scale
            found_inf = sum(t.to(scaler.device, non_blocking=True)
                            for t in optimizer_state["found_inf_per_device"].values())
            optimizer.grad_scale = (getattr(optimizer, "grad_scale", None)
                                    if optimizer_state["stage"] == OptState.UNSCALED
                                    else scaler * getattr(optimizer, "grad_scale", 1))
            optimizer.found_inf = found_inf
        retval = optimizer.step(*args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        if not has_grad_scaler_kwarg:
            del optimizer.grad_scale
            del optimizer.found_inf
        return retval

    def update(self, new_scale=None):
        """Set the scale for the next iteration: `new_scale` if given, else back off (a step
        found inf/nan) or grow (after `growth_interval` clean steps)."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=_scale.device, non_blocking=True)
                          for state in self._per_optimizer_states.values()
                          for found_inf in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for other in found_infs[1:]:
                found_inf_combined = found_inf_combined + other
            ember_tensor._amp_update_scale_(_scale, _growth_tracker, found_inf_combined, self._growth_factor,
                                            self._backoff_factor, self._growth_interval)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self):
        """The growth factor."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Set the growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The backoff factor."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Set the backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """The growth interval."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Set the growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())
        return 0

    def is_enabled(self):
        """Whether this scaler is enabled."""
        return self._enabled

    def state_dict(self):
        """The scaler's state: scale, growth_factor, backoff_factor, growth_interval and
        _growth_tracker ({} when disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        """Restore the state saved by `state_dict`."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _check_inf_per_device(self, optimizer):
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = ember_tensor.full((), 1.0, dtype=ember_tensor.float32, device=_scale.device)
        found_inf = ember_tensor.full((), 0.0, dtype=ember_tensor.float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = self._unscale_grads_(
            optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
