"""Adam and AdamW: adaptive moments with bias correction (and decoupled weight decay)."""
import ember_tensor

from ._fused import check_fused_options
from ._helpers import check_betas, check_non_negative, get_value, new_step, use_fused, zeros_state
from ._stepping import GroupwiseOptimizer

__all__ = ["Adam", "AdamW", "adam", "adamw"]


class Adam(GroupwiseOptimizer):
    """Adam (Kingma & Ba, 2014), as ``torch.optim.Adam``; AMSGrad with ``amsgrad=True``.

    ``m = lerp(m, g, 1 - beta1)``, ``v = beta2 * v + (1 - beta2) * g * g``,
    ``p -= lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)``.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        check_non_negative(lr, "Invalid learning rate: {}")
        check_non_negative(eps, "Invalid epsilon value: {}")
        check_betas(betas)
        check_non_negative(weight_decay, "Invalid weight_decay value: {}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_fused_options(fused, foreach, differentiable)
        if fused:
            # GradScaler hands a fused optimizer `grad_scale` and `found_inf` (as attributes)
            # instead of unscaling: the fused op unscales and skips the step itself.
            self._step_supports_amp_scaling = True

    _state_keys = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step")

    def _init_state(self, param, group):
        # fused=True keeps the step counter on the parameter's device, as PyTorch does, so
        # that a CUDA step reads it there; otherwise it is a host scalar.
        step = (ember_tensor.zeros((), dtype=ember_tensor.float32, device=param.device) if group["fused"]
                else new_step())
        state = {"step": step, "exp_avg": zeros_state(param), "exp_avg_sq": zeros_state(param)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_state(param)
        return state

    def _update(self, group, params, grads, states):
        beta1, beta2 = group["betas"]
        adam(params, grads, *states, amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2,
             lr=group["lr"], weight_decay=group["weight_decay"], eps=group["eps"],
             maximize=group["maximize"], fused=group["fused"],
             decoupled_weight_decay=group["decoupled_weight_decay"],
             grad_scale=getattr(self, "grad_scale", None), found_inf=getattr(self, "found_inf", None))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as ``torch.optim.AdamW``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad, beta1,
         beta2, lr, weight_decay, eps, maximize, fused=None, decoupled_weight_decay=False,
         foreach=None, capturable=False, differentiable=False, grad_scale=None, found_inf=None,
         has_complex=False):
    """The Adam update of ``params`` and their moment buffers, in place (``torch.optim.adam``).

    ``state_steps`` are the step counters (0-d tensors), advanced here by one.
    ``fused=None`` uses the one-pass op (``ember_tensor._fused_adam_``/``_fused_adamw_``,
    CPU and CUDA) where the tensors allow.
    """
    lr = get_value(lr)
    fused_indices = []
    for i, param in enumerate(params):
        grad, step_t = grads[i], state_steps[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        max_sq = max_exp_avg_sqs[i] if amsgrad else None
        step_t.add_(1)
        if use_fused(fused, (param, grad, exp_avg, exp_avg_sq, max_sq)):
            fused_indices.append(i)
            continue
        step = get_value(step_t)
        grad = -grad if maximize else grad
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        step_size = lr / (1 - beta1 ** step)
        bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
        if amsgrad:
            ember_tensor.maximum(max_sq, exp_avg_sq, out=max_sq)
            denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        param.addcdiv_(exp_avg, denom, value=-step_size)
    if fused_indices:
        _adam_fused(fused_indices, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                    amsgrad=amsgrad, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay,
                    eps=eps, maximize=maximize, decoupled_weight_decay=decoupled_weight_decay,
                    grad_scale=grad_scale, found_inf=found_inf)


def _adam_fused(indices, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *,
                amsgrad, decoupled_weight_decay, grad_scale, found_inf, **options):
    """The fused op over the parameters at ``indices`` (steps already advanced)."""
    def pick(tensors):
        return [tensors[i] for i in indices]

    op = ember_tensor._fused_adamw_ if decoupled_weight_decay else ember_tensor._fused_adam_
    op(pick(params), pick(grads), pick(exp_avgs), pick(exp_avg_sqs),
       pick(max_exp_avg_sqs) if amsgrad else [], pick(state_steps), amsgrad=amsgrad,
       grad_scale=grad_scale, found_inf=found_inf, **options)
    if found_inf is not None:  # a skipped step does not count (PyTorch's _fused_adam)
        for step_t in pick(state_steps):
            step_t.sub_(found_inf.to(step_t.device))


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kwargs):
    """``adam`` with decoupled weight decay (``torch.optim.adamw``)."""
    kwargs["decoupled_weight_decay"] = True
    adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, **kwargs)
