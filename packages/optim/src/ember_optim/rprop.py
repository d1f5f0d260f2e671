"""Rprop: per-coordinate step sizes that grow while a gradient keeps its sign."""
import ember_tensor

from ._helpers import check_non_negative, new_step, zeros_state
from ._stepping import GroupwiseOptimizer

__all__ = ["Rprop", "rprop"]


class Rprop(GroupwiseOptimizer):
    """Resilient backpropagation (Riedmiller & Braun, 1993), as ``torch.optim.Rprop``."""

    _state_keys = ("prev", "step_size", "step")

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False,
                 foreach=None, maximize=False, differentiable=False):
        check_non_negative(lr, "Invalid learning rate: {}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def _init_state(self, param, group):
        lr = group["lr"]
        # A complex parameter's parts are two coordinates, each starting at step size lr.
        start = complex(lr, lr) if param.is_complex() else lr
        return {"step": new_step(), "prev": zeros_state(param),
                "step_size": ember_tensor.full(param.shape, start, dtype=param.dtype, device=param.device)}

    def _update(self, group, params, grads, states):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        rprop(params, grads, *states, step_size_min=step_size_min, step_size_max=step_size_max,
              etaminus=etaminus, etaplus=etaplus, maximize=group["maximize"])


def rprop(params, grads, prevs, step_sizes, state_steps, *, step_size_min, step_size_max, etaminus,
          etaplus, maximize=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False):
    """The Rprop update in place (``torch.optim.rprop``)."""
    for param, grad, prev, step_size, step in zip(params, grads, prevs, step_sizes, state_steps):
        grad = -grad if maximize else grad
        step.add_(1)
        sign = grad.mul(prev).sign()
        # Same sign as last step: grow the step; flipped: shrink it and skip this update.
        grew, shrank, zero = sign.gt(0), sign.lt(0), sign.eq(0)
        sign[grew] = etaplus
        sign[shrank] = etaminus
        sign[zero] = 1
        step_size.mul_(sign).clamp_(step_size_min, step_size_max)
        grad = grad.clone()
        grad[sign.eq(etaminus)] = 0
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
