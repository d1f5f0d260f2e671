"""Device and dtype conversion of Module: ``to``, ``cuda``, ``cpu``, ``float``, ``double``,
``half``, ``bfloat16``, ``type``, ``to_empty``, ``share_memory``, all through ``_apply``."""
import ember_autograd
import ember_tensor
from ember_tensor import Tensor

__all__ = ["ConversionMixin"]


class ConversionMixin:
    """The conversion half of Module (the registries it walks are set up by Module)."""

    def _apply(self, fn, recurse=True):
        """Replace every parameter's and buffer's data by ``fn(tensor)``.

        Parameters stay the same objects (their ``.data`` is swapped) so that optimizers
        holding them keep working after ``model.to(...)``.
        """
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with ember_autograd.no_grad():
                param.data = fn(param)
                if param.grad is not None:
                    param.grad = fn(param.grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(tensor)``, ``to(device, dtype)``. Only floating tensors change dtype."""
        device, dtype = kwargs.get("device"), kwargs.get("dtype")
        for arg in args:
            if isinstance(arg, ember_tensor.dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                device, dtype = arg.device, arg.dtype
            else:
                device = arg
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        def convert(t):
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None)
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Move parameters and buffers to `device` without copying their values."""
        return self._apply(lambda t: ember_tensor.empty_like(t, device=device), recurse=recurse)

    def share_memory(self):
        """Move every parameter and buffer to shared memory (``Tensor.share_memory_``):
        processes that receive this module through torch.multiprocessing, or are forked
        after this call, update the same values (Hogwild training)."""
        return self._apply(lambda t: t.share_memory_())

    def cuda(self, device=None):
        """Move every parameter and buffer to a CUDA device."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        """Move every parameter and buffer to the CPU."""
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        """Cast every parameter and buffer to `dst_type`."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Cast floating parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Cast floating parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Cast floating parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Cast floating parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

