"""NAdam: Adam with Nesterov momentum and a momentum-decay schedule (Dozat, 2016)."""
from ._helpers import check_betas, check_non_negative, get_value, new_step, zeros_state
from ._stepping import GroupwiseOptimizer
import ember_tensor

__all__ = ["NAdam", "nadam"]


class NAdam(GroupwiseOptimizer):
    """NAdam, as ``torch.optim.NAdam`` (``decoupled_weight_decay=True`` gives NAdamW)."""

    _state_keys = ("exp_avg", "exp_avg_sq", "mu_product", "step")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        check_non_negative(lr, "Invalid learning rate: {}")
        check_non_negative(eps, "Invalid epsilon value: {}")
        check_betas(betas)
        check_non_negative(weight_decay, "Invalid weight_decay value: {}")
        check_non_negative(momentum_decay, "Invalid momentum_decay value: {}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def _init_state(self, param, group):
        return {"step": new_step(), "mu_product": ember_tensor.tensor(1.0, dtype=ember_tensor.float32),
                "exp_avg": zeros_state(param), "exp_avg_sq": zeros_state(param)}

    def _update(self, group, params, grads, states):
        beta1, beta2 = group["betas"]
        nadam(params, grads, *states, beta1=beta1, beta2=beta2, lr=group["lr"],
              weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
              eps=group["eps"], decoupled_weight_decay=group["decoupled_weight_decay"],
              maximize=group["maximize"])


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *, beta1, beta2, lr,
          weight_decay, momentum_decay, eps, decoupled_weight_decay=False, maximize=False,
          foreach=None, capturable=False, differentiable=False, has_complex=False):
    """The NAdam update in place (``torch.optim.nadam``); ``mu_products`` are 0-d tensors."""
    lr = get_value(lr)
    for param, grad, exp_avg, exp_avg_sq, mu_product, step_t in zip(
            params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps):
        grad = -grad if maximize else grad
        step_t.add_(1)
        step = get_value(step_t)
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product.mul_(mu)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt().add_(eps)
        mu_product_value = get_value(mu_product)
        mu_product_next = mu_product_value * mu_next
        param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product_value)))
        param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
