"""Derivatives of copies and conversions."""
import ember_tensor as E

from ._registry import composite, derivative


@derivative("clone")
def clone(ctx, grad):
    return grad


@derivative("to", inputs=("self",), name="ToCopyBackward0",
            save=lambda self, *args, **kwargs: (self.device,))
def to(ctx, grad, device):
    # The engine casts the dtype back; the device is this formula's business.
    return grad.to(device=device)


@derivative("copy_", inputs=("self", "src"), name="CopyBackwards",
            save=lambda self, src, non_blocking=False: (src.device,))
def copy_(ctx, grad, src_device):
    needs = ctx.needs_input_grad
    return (E.zeros_like(grad) if needs[0] else None,
            grad.to(device=src_device) if needs[1] else None)


@derivative("fill_", inputs=("self", "value"),
            name=lambda self, value: "FillBackward3" if isinstance(value, E.Tensor) else "FillBackward2")
def fill_(ctx, grad):
    needs = ctx.needs_input_grad
    return (E.zeros_like(grad) if needs[0] else None,
            grad.sum() if needs[1] else None)


composite("contiguous", "zero_")
