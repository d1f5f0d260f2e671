"""RAdam: Adam whose adaptive step is rectified while the variance estimate is unreliable."""
from ._helpers import check_betas, check_non_negative, get_value, new_step, zeros_state
from ._stepping import GroupwiseOptimizer

__all__ = ["RAdam", "radam"]


class RAdam(GroupwiseOptimizer):
    """RAdam (Liu et al., 2019), as ``torch.optim.RAdam``."""

    _state_keys = ("exp_avg", "exp_avg_sq", "step")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_non_negative(lr, "Invalid learning rate: {}")
        check_non_negative(eps, "Invalid epsilon value: {}")
        check_betas(betas)
        check_non_negative(weight_decay, "Invalid weight_decay value: {}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))

    def _init_state(self, param, group):
        return {"step": new_step(), "exp_avg": zeros_state(param), "exp_avg_sq": zeros_state(param)}

    def _update(self, group, params, grads, states):
        beta1, beta2 = group["betas"]
        radam(params, grads, *states, beta1=beta1, beta2=beta2, lr=group["lr"],
              weight_decay=group["weight_decay"], eps=group["eps"],
              decoupled_weight_decay=group["decoupled_weight_decay"], maximize=group["maximize"])


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2, lr, weight_decay, eps,
          decoupled_weight_decay=False, maximize=False, foreach=None, capturable=False,
          differentiable=False, has_complex=False):
    """The RAdam update in place (``torch.optim.radam``)."""
    lr = get_value(lr)
    for param, grad, exp_avg, exp_avg_sq, step_t in zip(params, grads, exp_avgs, exp_avg_sqs, state_steps):
        grad = -grad if maximize else grad
        step_t.add_(1)
        step = get_value(step_t)
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        # rho: the length of the approximated simple moving average of the variance.
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / exp_avg_sq.sqrt().add_(eps)
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
