"""Adagrad: per-coordinate step sizes from the running sum of squared gradients."""
import ember_tensor

from ._fused import check_fused_options, check_fused_supported
from ._helpers import check_non_negative, get_value, new_step
from ._stepping import GroupwiseOptimizer

__all__ = ["Adagrad", "adagrad"]


class Adagrad(GroupwiseOptimizer):
    """Adagrad (Duchi et al., 2011), as ``torch.optim.Adagrad``."""

    _state_keys = ("sum", "step")

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_non_negative(lr, "Invalid learning rate: {}")
        check_non_negative(lr_decay, "Invalid lr_decay value: {}")
        check_non_negative(weight_decay, "Invalid weight_decay value: {}")
        check_non_negative(initial_accumulator_value, "Invalid initial_accumulator_value value: {}")
        check_non_negative(eps, "Invalid epsilon value: {}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        # PyTorch creates Adagrad's state eagerly, so that share_memory() can see it.
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._init_state(p, group))
        check_fused_options(fused, foreach, differentiable)
        if fused:  # GradScaler's grad_scale/found_inf go to the fused op (see Adam)
            self._step_supports_amp_scaling = True

    def _init_state(self, param, group):
        init = group["initial_accumulator_value"]
        step = (ember_tensor.zeros((), dtype=ember_tensor.float32, device=param.device) if group["fused"]
                else new_step())  # PyTorch keeps a fused optimizer's step on the parameter's device
        return {"step": step,
                "sum": ember_tensor.full(param.shape, init, dtype=param.dtype, device=param.device)}

    def _update(self, group, params, grads, states):
        adagrad(params, grads, *states, lr=group["lr"], weight_decay=group["weight_decay"],
                lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"],
                fused=group["fused"], grad_scale=getattr(self, "grad_scale", None),
                found_inf=getattr(self, "found_inf", None))


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps, maximize=False,
            foreach=None, fused=None, differentiable=False, has_sparse_grad=False, has_complex=False,
            grad_scale=None, found_inf=None):
    """The Adagrad update in place (``torch.optim.adagrad``).

    ``fused=True`` runs ``ember_tensor._fused_adagrad_`` (one pass per parameter; CPU only,
    as in PyTorch); the default is the plain-op form, which runs on any device.
    """
    lr = get_value(lr)
    if fused:
        _adagrad_fused(params, grads, state_sums, state_steps, lr=lr, weight_decay=weight_decay,
                       lr_decay=lr_decay, eps=eps, maximize=maximize, has_sparse_grad=has_sparse_grad,
                       grad_scale=grad_scale, found_inf=found_inf)
        return
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t.add_(1)
        step = get_value(step_t)
        grad = -grad if maximize else grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sum.addcmul_(grad, grad, value=1)
        std = state_sum.sqrt().add_(eps)
        param.addcdiv_(grad, std, value=-clr)


def _adagrad_fused(params, grads, state_sums, state_steps, *, has_sparse_grad, grad_scale, found_inf,
                   **options):
    if not params:
        return
    if has_sparse_grad or any(g.is_sparse for g in grads):
        raise RuntimeError("`fused` does not support sparse grad or complex param")
    for p in params:
        check_fused_supported(p, cuda_supported=False)
    for step_t in state_steps:
        step_t.add_(1)
    ember_tensor._fused_adagrad_(params, grads, state_sums, state_steps, grad_scale=grad_scale,
                                 found_inf=found_inf, **options)
    if found_inf is not None:  # a skipped step does not count (PyTorch's _fused_adagrad)
        for step_t in state_steps:
            step_t.sub_(found_inf.to(step_t.device))
