"""ASGD: SGD with a decaying step size and a running (Polyak) average of the iterates."""
import ember_tensor

from ._helpers import check_non_negative, get_value, new_step, zeros_state
from ._stepping import GroupwiseOptimizer

__all__ = ["ASGD", "asgd"]


def _scalar(value):
    # PyTorch keeps eta and mu as float32 0-d tensors, so their values round to float32.
    return ember_tensor.tensor(value, dtype=ember_tensor.float32)


class ASGD(GroupwiseOptimizer):
    """Averaged SGD (Polyak & Juditsky, 1992), as ``torch.optim.ASGD``; the average is ``state["ax"]``."""

    _state_keys = ("ax", "mu", "eta", "step")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        check_non_negative(lr, "Invalid learning rate: {}")
        check_non_negative(weight_decay, "Invalid weight_decay value: {}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, capturable=capturable,
                                      differentiable=differentiable))

    def _init_state(self, param, group):
        return {"step": new_step(), "eta": _scalar(get_value(group["lr"])), "mu": _scalar(1.0),
                "ax": zeros_state(param)}

    def _update(self, group, params, grads, states):
        asgd(params, grads, *states, lambd=group["lambd"], lr=group["lr"], t0=group["t0"],
             alpha=group["alpha"], weight_decay=group["weight_decay"], maximize=group["maximize"])


def asgd(params, grads, axs, mus, etas, state_steps, *, lambd, lr, t0, alpha, weight_decay,
         maximize=False, foreach=None, capturable=False, differentiable=False, has_complex=False):
    """The ASGD update in place (``torch.optim.asgd``); ``mus``/``etas`` are 0-d tensors."""
    lr = get_value(lr)
    for param, grad, ax, mu, eta, step_t in zip(params, grads, axs, mus, etas, state_steps):
        grad = -grad if maximize else grad
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        eta_value = get_value(eta)
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if get_value(mu) != 1:
            ax.add_(param.sub(ax).mul_(get_value(mu)))
        else:
            ax.copy_(param)
        step = get_value(step_t)
        eta.copy_(_scalar(lr / ((1 + lambd * lr * step) ** alpha)))
        mu.copy_(_scalar(1 / max(1, step - t0)))
