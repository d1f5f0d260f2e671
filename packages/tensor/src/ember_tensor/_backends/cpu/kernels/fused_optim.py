"""Fused optimizer update loops for the CPU: one pass over each parameter, reading and
writing every array once (the kernels behind `ember_tensor._fused_sgd_`, `_fused_adam_`,
`_fused_adamw_` and `_fused_adagrad_`).

The plain-op forms of ``ember_optim.sgd``/``adam`` make five to eight passes over memory
per parameter (one per tensor op, each with a temporary); an optimizer step is
memory-bound, so one Numba loop that keeps the intermediates in registers is several
times faster.

Each loop body is compiled twice from one source: serial below ``PARALLEL_THRESHOLD``
elements and ``parallel=True`` above it, where ``prange`` splits the loop over cores.
The threshold is high (1M elements) because a parallel region ends in a barrier that
waits for every thread: on a busy machine (measured: load 10 on 2 cores) a 200k-element
update took 20 ms in parallel against 0.4 ms serially, and even on an idle one thread
start-up outweighs the gain for tensors that fit in cache. Options (momentum, nesterov,
...) are run-time arguments where that costs nothing, so a dtype costs two compilations
per optimizer; compilation happens on the first step that needs it.

The loops take 1-d contiguous float32/float64 NumPy arrays (the op layer,
`_ops/fused_optim.py`, flattens tensors and widens half types to float32).
"""
import numba
from numba import prange

from ... import optim_steps
from .. import threads

__all__ = ["sgd_update", "adam_update", "adagrad_update", "check_and_unscale", "PARALLEL_THRESHOLD"]

PARALLEL_THRESHOLD = 1 << 20


# The per-element formulas are `_backends.optim_steps`'s, shared with the CUDA kernels;
# inlined, so that the loops below vectorize as if written out.
_sgd_step = numba.njit(inline="always", error_model="numpy")(optim_steps.sgd_step)
_adam_step = numba.njit(inline="always", error_model="numpy")(optim_steps.adam_step)
_adagrad_step = numba.njit(inline="always", error_model="numpy")(optim_steps.adagrad_step)


def _sgd_body(param, grad, buf, lr, weight_decay, momentum, one_minus_dampening, nesterov,
              maximize, first_step):
    for i in prange(param.shape[0]):
        p, b = _sgd_step(param[i], grad[i], buf[i], lr, weight_decay, momentum, one_minus_dampening,
                         nesterov, maximize, first_step)
        if momentum != 0:  # buf aliases param otherwise
            buf[i] = b
        param[i] = p


def _make_adam_body(amsgrad, coupled_weight_decay, lerp_low):
    """The Adam loop for one combination of options, fixed at compile time.

    Run-time flags inside this loop (a conditional store for amsgrad, two lerp formulas)
    stop LLVM from vectorizing it (measured: 15x slower than the SGD loop per byte);
    closure constants let it drop the dead branches. At most 8 variants exist and a
    program normally uses one.
    """

    def adam_body(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, sign, weight_decay,
                  decay_factor, weight1, weight1_complement, beta2, one_minus_beta2, eps,
                  step_size, bias_correction2_sqrt):
        for i in prange(param.shape[0]):
            p, m, v, v_max = _adam_step(
                param[i], grad[i], exp_avg[i], exp_avg_sq[i], max_exp_avg_sq[i], sign, weight_decay,
                decay_factor, weight1, weight1_complement, beta2, one_minus_beta2, eps, step_size,
                bias_correction2_sqrt, amsgrad, coupled_weight_decay, lerp_low)
            exp_avg[i] = m
            exp_avg_sq[i] = v
            if amsgrad:  # max_exp_avg_sq aliases param otherwise
                max_exp_avg_sq[i] = v_max
            param[i] = p

    adam_body.__name__ = f"adam_body_{int(amsgrad)}{int(coupled_weight_decay)}{int(lerp_low)}"
    return adam_body


def _adagrad_body(param, grad, state_sum, sign, weight_decay, clr, eps):
    for i in prange(param.shape[0]):
        p, s = _adagrad_step(param[i], grad[i], state_sum[i], sign, weight_decay, clr, eps)
        state_sum[i] = s
        param[i] = p


_ADAM_BODIES = {}


def _adam_kernel(amsgrad, coupled_weight_decay, lerp_low, parallel):
    key = (amsgrad, coupled_weight_decay, lerp_low)
    if key not in _ADAM_BODIES:
        _ADAM_BODIES[key] = _make_adam_body(*key)
    return _kernel(_ADAM_BODIES[key], parallel)


_COMPILED = {}


def _kernel(body, parallel):
    key = (body.__name__, parallel)
    if key not in _COMPILED:
        # error_model="numpy": x / 0 gives inf/nan as in PyTorch; Python's model would test
        # every division for zero and raise, and that branch alone stops vectorization.
        _COMPILED[key] = numba.njit(parallel=parallel, fastmath=False, nogil=True,
                                    error_model="numpy")(body)
    return _COMPILED[key]


def sgd_update(p, grad, buf, *, lr, weight_decay, momentum, dampening, nesterov, maximize,
               first_step):
    """One fused SGD step on 1-d array ``p`` (and ``buf``, the momentum buffer, or None)."""
    if buf is None:
        buf = p  # never read or written: momentum is 0
    kernel = _kernel(_sgd_body, threads.parallel(p.shape[0], PARALLEL_THRESHOLD))
    scalar = p.dtype.type  # compute in the parameter's precision, as PyTorch does
    kernel(p, grad, buf, scalar(lr), scalar(weight_decay), scalar(momentum),
           scalar(1 - dampening), bool(nesterov), bool(maximize), bool(first_step))


def adam_update(p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, *, step, lr, beta1, beta2,
                eps, weight_decay, decoupled_weight_decay, amsgrad, maximize):
    """One fused Adam/AdamW step on 1-d arrays (``step`` already counts this one), in place."""
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    vmax = max_exp_avg_sq if amsgrad else p
    coupled = weight_decay != 0 and not decoupled_weight_decay
    weight1 = 1 - beta1
    kernel = _adam_kernel(bool(amsgrad), coupled, weight1 < 0.5, threads.parallel(p.shape[0], PARALLEL_THRESHOLD))
    scalar = p.dtype.type
    kernel(p, grad, exp_avg, exp_avg_sq, vmax, scalar(-1 if maximize else 1),
           scalar(weight_decay), scalar(1 - lr * weight_decay if decoupled_weight_decay else 1),
           scalar(weight1), scalar(1 - weight1), scalar(beta2), scalar(1 - beta2), scalar(eps),
           scalar(lr / bias_correction1), scalar(bias_correction2 ** 0.5))


def adagrad_update(p, grad, state_sum, *, step, lr, lr_decay, weight_decay, eps, maximize):
    """One fused Adagrad step on 1-d arrays (``step`` already counts this one), in place."""
    kernel = _kernel(_adagrad_body, threads.parallel(p.shape[0], PARALLEL_THRESHOLD))
    scalar = p.dtype.type
    kernel(p, grad, state_sum, scalar(-1 if maximize else 1), scalar(weight_decay),
           scalar(lr / (1 + (step - 1) * lr_decay)), scalar(eps))


def _check_and_unscale_body(grad, inv_scale):
    # v - v is 0 for a finite v and nan for inf or nan: the sum is nan iff any element is
    # non-finite, with no branch in the loop (a branch would stop it vectorizing).
    nonfinite = grad.dtype.type(0)
    for i in prange(grad.shape[0]):
        v = grad[i]
        nonfinite += v - v
        grad[i] = v * inv_scale
    return nonfinite != nonfinite


def check_and_unscale(grad, inv_scale):
    """AMP's gradient pass on 1-d array ``grad``: multiply it by ``inv_scale`` in place, in the
    same pass telling whether any element was inf or nan (returned)."""
    kernel = _kernel(_check_and_unscale_body, grad.shape[0] >= PARALLEL_THRESHOLD)
    return bool(kernel(grad, grad.dtype.type(inv_scale)))
