"""Adamax: Adam with the infinity norm of past gradients in place of their RMS."""
import ember_tensor

from ._helpers import check_betas, check_non_negative, get_value, new_step, zeros_state
from ._stepping import GroupwiseOptimizer

__all__ = ["Adamax", "adamax"]


class Adamax(GroupwiseOptimizer):
    """Adamax (Kingma & Ba, 2014, section 7), as ``torch.optim.Adamax``."""

    _state_keys = ("exp_avg", "exp_inf", "step")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        check_non_negative(lr, "Invalid learning rate: {}")
        check_non_negative(eps, "Invalid epsilon value: {}")
        check_betas(betas)
        check_non_negative(weight_decay, "Invalid weight_decay value: {}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def _init_state(self, param, group):
        return {"step": new_step(), "exp_avg": zeros_state(param), "exp_inf": zeros_state(param)}

    def _update(self, group, params, grads, states):
        beta1, beta2 = group["betas"]
        adamax(params, grads, *states, eps=group["eps"], beta1=beta1, beta2=beta2, lr=group["lr"],
               weight_decay=group["weight_decay"], maximize=group["maximize"])


def adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2, lr, weight_decay,
           maximize=False, foreach=None, differentiable=False, capturable=False, has_complex=False):
    """The Adamax update in place (``torch.optim.adamax``)."""
    lr = get_value(lr)
    for param, grad, exp_avg, exp_inf, step_t in zip(params, grads, exp_avgs, exp_infs, state_steps):
        grad = -grad if maximize else grad
        step_t.add_(1)
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        ember_tensor.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        clr = lr / (1 - beta1 ** get_value(step_t))
        param.addcdiv_(exp_avg, exp_inf, value=-clr)
