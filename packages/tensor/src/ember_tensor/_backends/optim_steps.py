"""Per-element updates of the fused optimizer steps, written once for both devices.

Each is a plain Python function of numbers, like `_backends.scalar`'s: the CPU loops
(`cpu/kernels/fused_optim.py`) inline it into their Numba loops and the CUDA kernels
(`cuda/kernels/fused_optim.py`) call it as a device function, so a CPU step and a CUDA
step compute the same formulas in the same order. What stays in the kernels is what is
not per element: iterating, which of the results to store (a buffer that is not in use
aliases the parameter and must not be written), and on CUDA AMP's unscaling and
``found_inf`` skip and the bias corrections from a device-resident step counter.

Scalars reach these already in the parameter's dtype and already combined
(``1 - dampening``, ``1 - beta1``, ...): a float64 literal here would promote every
float32 element to float64 and round differently from PyTorch.
"""
import math

__all__ = ["sgd_step", "adam_step", "adagrad_step"]


def sgd_step(param, grad, buf, lr, weight_decay, momentum, one_minus_dampening, nesterov, maximize,
             first_step):
    """One SGD update of one element.

    Args:
        param, grad, buf: the element of the parameter, its gradient and its momentum
            buffer (any value when ``momentum`` is 0: it is then not read).
        first_step: the buffer is new: it starts as the gradient, as PyTorch's does.

    Returns:
        ``(param, buf)`` after the step; the caller stores ``buf`` only if ``momentum != 0``.

    Example:
        >>> sgd_step(1.0, 0.5, 0.0, 0.1, 0.0, 0.9, 1.0, False, False, True)
        (0.95, 0.5)
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    if momentum != 0:
        buf = g if first_step else momentum * buf + one_minus_dampening * g
        g = g + momentum * buf if nesterov else buf
    return param - lr * g, buf


def adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, sign, weight_decay, decay_factor, weight1,
              weight1_complement, beta2, one_minus_beta2, eps, step_size, bias_correction2_sqrt, amsgrad,
              coupled_weight_decay, lerp_low):
    """One Adam/AdamW update of one element.

    Args:
        sign: -1 with ``maximize``, else 1 (a multiplication is exact and, unlike a
            branch, vectorizes).
        decay_factor: ``1 - lr * weight_decay`` for AdamW's decoupled decay, else 1.
        weight1, weight1_complement: ``1 - beta1`` and ``beta1``, for PyTorch's two lerp
            formulas (``lerp_low`` picks the one it uses for a weight below 0.5).
        step_size, bias_correction2_sqrt: ``lr / (1 - beta1**t)`` and ``sqrt(1 - beta2**t)``.
        amsgrad, coupled_weight_decay, lerp_low: options; the CPU loops pass them as
            compile-time constants, so that the dead branches drop out and the loop vectorizes.

    Returns:
        ``(param, exp_avg, exp_avg_sq, max_exp_avg_sq)`` after the step; the caller stores
        ``max_exp_avg_sq`` only with ``amsgrad``.

    Example:
        >>> adam_step(1.0, 0.5, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.1, 0.9, 0.999, 0.001, 1e-8, 1.0, 1.0,
        ...           False, False, True)[1:3]
        (0.05, 0.00025)
    """
    g = sign * grad
    p = param * decay_factor
    if coupled_weight_decay:
        g = g + weight_decay * p
    # exp_avg = lerp(exp_avg, g, 1 - beta1), with PyTorch's choice of formula for the weight.
    if lerp_low:
        m = exp_avg + weight1 * (g - exp_avg)
    else:
        m = g - (g - exp_avg) * weight1_complement
    v = exp_avg_sq * beta2 + one_minus_beta2 * g * g
    v_max = max(max_exp_avg_sq, v) if amsgrad else v
    # math.sqrt of a float32 is a float32 when compiled (CPU and CUDA); under the CUDA
    # simulator it is a Python float, which NumPy's scalar rules (NEP 50) round back to
    # float32 in the division, as the compiled code computes it.
    denom = math.sqrt(v_max) / bias_correction2_sqrt + eps
    return p - step_size * (m / denom), m, v, v_max


def adagrad_step(param, grad, state_sum, sign, weight_decay, clr, eps):
    """One Adagrad update of one element; ``clr`` is the decayed learning rate.

    Returns:
        ``(param, state_sum)`` after the step.

    Example:
        >>> adagrad_step(1.0, 0.5, 0.0, 1.0, 0.0, 0.1, 0.0)
        (0.9, 0.25)
    """
    g = sign * grad
    if weight_decay != 0:  # loop-invariant: LLVM unswitches it
        g = g + weight_decay * param
    s = state_sum + g * g
    return param - clr * g / (math.sqrt(s) + eps), s
