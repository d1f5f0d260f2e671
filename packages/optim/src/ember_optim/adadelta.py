"""Adadelta: step sizes from running averages of squared gradients and squared updates."""
from ._helpers import check_non_negative, get_value, new_step, zeros_state
from ._stepping import GroupwiseOptimizer

__all__ = ["Adadelta", "adadelta"]


class Adadelta(GroupwiseOptimizer):
    """Adadelta (Zeiler, 2012), as ``torch.optim.Adadelta``."""

    _state_keys = ("square_avg", "acc_delta", "step")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_non_negative(lr, "Invalid learning rate: {}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_non_negative(eps, "Invalid epsilon value: {}")
        check_non_negative(weight_decay, "Invalid weight_decay value: {}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    def _init_state(self, param, group):
        return {"step": new_step(), "square_avg": zeros_state(param), "acc_delta": zeros_state(param)}

    def _update(self, group, params, grads, states):
        adadelta(params, grads, *states, lr=group["lr"], rho=group["rho"], eps=group["eps"],
                 weight_decay=group["weight_decay"], maximize=group["maximize"])


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho, eps, weight_decay,
             maximize=False, foreach=None, capturable=False, differentiable=False, has_complex=False):
    """The Adadelta update in place (``torch.optim.adadelta``)."""
    lr = get_value(lr)
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas, state_steps):
        step.add_(1)
        grad = -grad if maximize else grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_().div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)
