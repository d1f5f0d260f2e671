"""RMSprop: gradients scaled by a running RMS of past gradients (centered, with momentum)."""
from ._helpers import check_non_negative, get_value, new_step, zeros_state
from ._stepping import GroupwiseOptimizer

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(GroupwiseOptimizer):
    """RMSprop (Hinton's lecture 6e), as ``torch.optim.RMSprop``."""

    _state_keys = ("square_avg", "grad_avg", "momentum_buffer", "step")

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_non_negative(lr, "Invalid learning rate: {}")
        check_non_negative(eps, "Invalid epsilon value: {}")
        check_non_negative(momentum, "Invalid momentum value: {}")
        check_non_negative(weight_decay, "Invalid weight_decay value: {}")
        check_non_negative(alpha, "Invalid alpha value: {}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def _init_state(self, param, group):
        state = {"step": new_step(), "square_avg": zeros_state(param)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_state(param)
        if group["centered"]:
            state["grad_avg"] = zeros_state(param)
        return state

    def _update(self, group, params, grads, states):
        rmsprop(params, grads, *states, lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                weight_decay=group["weight_decay"], momentum=group["momentum"],
                centered=group["centered"], maximize=group["maximize"])


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *, lr, alpha, eps,
            weight_decay, momentum, centered, maximize=False, foreach=None, capturable=False,
            differentiable=False, has_complex=False):
    """The RMSprop update in place (``torch.optim.rmsprop``)."""
    lr = get_value(lr)
    for i, (param, grad, square_avg) in enumerate(zip(params, grads, square_avgs)):
        state_steps[i].add_(1)
        grad = -grad if maximize else grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            grad_avg.lerp_(grad, 1 - alpha)
            avg = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf.mul_(momentum).addcdiv_(grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            param.addcdiv_(grad, avg, value=-lr)
