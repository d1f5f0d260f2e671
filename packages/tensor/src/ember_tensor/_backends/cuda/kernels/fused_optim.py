"""numba.cuda kernels of the fused optimizer steps (`ember_tensor._fused_sgd_`,
`_fused_adam_`, `_fused_adamw_` on CUDA tensors) and of AMP's gradient check-and-unscale:
multi-tensor kernels (PyTorch's multi_tensor_apply), each launch walking a table of up to
a capacity of parameters and reading and writing each array once. The CUDA twins of
`_backends.cpu.kernels.fused_optim`.

The arithmetic is the CPU loops': both apply `_backends.optim_steps`'s per-element updates
(scalars in the parameter's dtype), so that a CUDA step equals a CPU step to the last bit
or two. What the kernels add around them:

* the table: one tuple of 1-d arrays per operand (parameters, gradients, buffers, ...),
  of which the first `count` are used; the tuples hold the kernel's capacity of arrays,
  or 8 rows' worth for a small launch (the rest padding, never read; see
  `_backends.cuda.optim._launch_multi`), so there are two specialisations per dtype
  whatever the number of parameters. The whole grid walks each parameter in turn: a
  block never waits on a table lookup, and a parameter smaller than the grid simply
  leaves threads idle;
* options are run-time flags packed in one int (``SGD_*``/``ADAM_*`` bits): on a GPU a
  branch every thread takes the same way costs nothing, and fewer arguments make the
  launch cheaper (numba-cuda marshals each argument on the host);
* AMP's ``grad_scale``/``found_inf`` are 1-element float32 device arrays read inside the
  kernel (PyTorch's semantics: skip the step when ``found_inf == 1``, divide the gradient
  by ``grad_scale`` and store it back unscaled), so no value crosses to the host;
* Adam's step counters may live on the device (PyTorch keeps them there for
  ``fused=True``): the kernel then computes each parameter's bias corrections from its
  counter in float64, as PyTorch's CUDA kernel does, and rounds them to the parameter's
  dtype like the host path does. That cast needs the dtype as a compile-time constant,
  hence one kernel object per dtype (float32, float64: half types are widened to float32
  by the op layer).

Under Numba's simulator (NUMBA_ENABLE_CUDASIM=1) the kernels run as Python: every value
stays a NumPy scalar (a division by zero gives inf/nan, as on the GPU, not an exception).
"""
import math

import numba
import numpy as np
from numba import cuda

from ... import optim_steps

__all__ = ["sgd_kernel", "adam_kernel", "multi_sgd_float32", "multi_sgd_float64", "multi_adam_float32",
           "multi_adam_float64", "SGD_NESTEROV", "SGD_MAXIMIZE", "SGD_FIRST_STEP",
           "HAS_GRAD_SCALE", "HAS_FOUND_INF", "ADAM_AMSGRAD", "ADAM_COUPLED_DECAY",
           "ADAM_LERP_LOW", "ADAM_DEVICE_STEP", "MULTI_TENSOR_ARRAYS", "MULTI_TENSOR_CAPACITY",
           "SGD_CAPACITY", "ADAM_CAPACITY", "check_and_unscale_kernel",
           "multi_check_and_unscale_float32", "multi_check_and_unscale_float64", "update_scale"]

# Flag bits shared by both kernels.
HAS_GRAD_SCALE = 1
HAS_FOUND_INF = 2
# SGD flags.
SGD_NESTEROV = 4
SGD_MAXIMIZE = 8
SGD_FIRST_STEP = 16
# Adam flags.
ADAM_AMSGRAD = 4
ADAM_COUPLED_DECAY = 8
ADAM_LERP_LOW = 16
ADAM_DEVICE_STEP = 32

# The per-element formulas are `_backends.optim_steps`'s, the ones the CPU loops inline.
_sgd_step = cuda.jit(device=True)(optim_steps.sgd_step)
_adam_step = cuda.jit(device=True)(optim_steps.adam_step)


def _named_kernel(fn, scalar):
    """``cuda.jit(fn)`` named ``<fn>_<dtype>``: the module attribute it is bound to, so tools
    (tools/cuda_ptx_check.py) can find it by name although it is a closure."""
    fn.__name__ = fn.__qualname__ = f"{fn.__name__}_{scalar}"
    return cuda.jit(fn)


# Arrays one multi-tensor launch takes in all its tuples. PyTorch's multi_tensor_apply
# table holds 110 pointers; a Numba 1-d array is 7 words as a kernel argument, and 64 of
# them keep the launch's parameters under CUDA's 4 KiB. Each kernel's capacity (the
# parameters of one launch) is that budget over the arrays it takes per parameter.
MULTI_TENSOR_ARRAYS = 64
MULTI_TENSOR_CAPACITY = MULTI_TENSOR_ARRAYS  # AMP's unscale: one array per gradient
SGD_CAPACITY = MULTI_TENSOR_ARRAYS // 3  # param, grad, momentum buffer
ADAM_CAPACITY = MULTI_TENSOR_ARRAYS // 6  # param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step


def _make_sgd_kernel(scalar):
    def multi_sgd(params, grads, bufs, count, grad_scale, found_inf, lr, weight_decay, momentum,
                  one_minus_dampening, flags):
        """SGD steps of the first `count` parameters of the tuples (bufs aliases params when
        momentum is 0: never written then)."""
        if (flags & HAS_FOUND_INF) != 0 and found_inf[0] == 1.0:
            return  # AMP found an inf/nan in the gradients: this step is skipped
        unscale = (flags & HAS_GRAD_SCALE) != 0
        nesterov = (flags & SGD_NESTEROV) != 0
        maximize = (flags & SGD_MAXIMIZE) != 0
        first_step = (flags & SGD_FIRST_STEP) != 0
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for k in range(count):
            param, grad, buf = params[k], grads[k], bufs[k]
            for i in range(start, param.shape[0], stride):
                g = grad[i]
                if unscale:
                    g = scalar(g / grad_scale[0])
                    grad[i] = g
                p, b = _sgd_step(param[i], g, buf[i], lr, weight_decay, momentum, one_minus_dampening, nesterov,
                                 maximize, first_step)
                if momentum != 0:  # buf aliases param otherwise
                    buf[i] = b
                param[i] = p

    return _named_kernel(multi_sgd, scalar)


def _make_adam_kernel(scalar):
    def multi_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, count, grad_scale, found_inf,
                   sign, weight_decay, decay_factor, weight1, weight1_complement, beta2, one_minus_beta2, eps,
                   step_size, bias_correction2_sqrt, lr64, beta1_64, beta2_64, flags):
        """Adam steps of the first `count` parameters of the tuples (max_exp_avg_sqs aliases
        params without amsgrad: never written then; steps are read with ADAM_DEVICE_STEP)."""
        if (flags & HAS_FOUND_INF) != 0 and found_inf[0] == 1.0:
            return
        unscale = (flags & HAS_GRAD_SCALE) != 0
        amsgrad = (flags & ADAM_AMSGRAD) != 0
        coupled = (flags & ADAM_COUPLED_DECAY) != 0
        lerp_low = (flags & ADAM_LERP_LOW) != 0
        device_step = (flags & ADAM_DEVICE_STEP) != 0
        start = cuda.grid(1)
        stride = cuda.gridsize(1)
        for k in range(count):
            param, grad, exp_avg, exp_avg_sq = params[k], grads[k], exp_avgs[k], exp_avg_sqs[k]
            max_exp_avg_sq = max_exp_avg_sqs[k]
            size, correction2 = step_size, bias_correction2_sqrt
            if device_step:
                # Bias corrections from this parameter's device-resident step, in float64,
                # then rounded to the parameter's dtype exactly as the host computes them.
                t = numba.float64(steps[k][0])
                size = scalar(lr64 / (1.0 - beta1_64 ** t))
                correction2 = scalar(math.sqrt(1.0 - beta2_64 ** t))
            for i in range(start, param.shape[0], stride):
                g = grad[i]
                if unscale:
                    g = scalar(g / grad_scale[0])
                    grad[i] = g
                p, m, v, v_max = _adam_step(
                    param[i], g, exp_avg[i], exp_avg_sq[i], max_exp_avg_sq[i], sign, weight_decay, decay_factor,
                    weight1, weight1_complement, beta2, one_minus_beta2, eps, size, correction2,
                    amsgrad, coupled, lerp_low)
                exp_avg[i] = m
                exp_avg_sq[i] = v
                if amsgrad:  # max_exp_avg_sq aliases param otherwise
                    max_exp_avg_sq[i] = v_max
                param[i] = p

    return _named_kernel(multi_adam, scalar)


# One kernel object per dtype, bound to module names (compiled on first launch).
multi_sgd_float32 = _make_sgd_kernel(numba.float32)
multi_sgd_float64 = _make_sgd_kernel(numba.float64)
multi_adam_float32 = _make_adam_kernel(numba.float32)
multi_adam_float64 = _make_adam_kernel(numba.float64)
_SGD = {np.dtype(np.float32): multi_sgd_float32, np.dtype(np.float64): multi_sgd_float64}
_ADAM = {np.dtype(np.float32): multi_adam_float32, np.dtype(np.float64): multi_adam_float64}


def sgd_kernel(np_dtype):
    """The multi-tensor SGD kernel for float32 or float64 parameters: tuples of
    `SGD_CAPACITY` flat arrays, of which the first `count` are used."""
    return _SGD[np.dtype(np_dtype)]


def adam_kernel(np_dtype):
    """The multi-tensor Adam/AdamW kernel for float32 or float64 parameters: tuples of
    `ADAM_CAPACITY` flat arrays, of which the first `count` are used."""
    return _ADAM[np.dtype(np_dtype)]


def _make_check_and_unscale_kernel(scalar):
    def multi_check_and_unscale(grads, count, found_inf, inv_scale):
        """AMP's gradient pass over the first `count` arrays of the tuple `grads`:
        grad *= inv_scale[0]; found_inf[0] = 1 if any element of any is inf/nan."""
        scale = inv_scale[0]
        start, stride = cuda.grid(1), cuda.gridsize(1)
        # The whole grid walks each gradient in turn: a block never waits on a table
        # lookup, and a gradient smaller than the grid simply leaves threads idle.
        for k in range(count):
            grad = grads[k]
            for i in range(start, grad.shape[0], stride):
                v = grad[i]
                if not math.isfinite(v):
                    found_inf[0] = 1.0  # every writer writes the same value: no atomic needed
                grad[i] = scalar(v * scale)

    return _named_kernel(multi_check_and_unscale, scalar)


multi_check_and_unscale_float32 = _make_check_and_unscale_kernel(numba.float32)
multi_check_and_unscale_float64 = _make_check_and_unscale_kernel(numba.float64)
_CHECK = {np.dtype(np.float32): multi_check_and_unscale_float32,
          np.dtype(np.float64): multi_check_and_unscale_float64}


def check_and_unscale_kernel(np_dtype):
    """AMP's multi-tensor check-and-unscale kernel for float32 or float64 gradients: one
    launch over a tuple of `MULTI_TENSOR_CAPACITY` flat arrays, of which the first `count`
    are gradients."""
    return _CHECK[np.dtype(np_dtype)]


@cuda.jit
def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """AMP's scale update on the device (one thread): back off on inf/nan, grow after
    `growth_interval` clean steps in a row unless the grown scale is inf."""
    if cuda.grid(1) != 0:
        return
    if found_inf[0] != 0.0:
        scale[0] = scale[0] * backoff_factor
        growth_tracker[0] = 0
        return
    successful = growth_tracker[0] + 1
    if successful == growth_interval:
        grown = numba.float32(scale[0] * growth_factor)  # the scale is float32: inf if it overflows
        if math.isfinite(grown):
            scale[0] = grown
        growth_tracker[0] = 0
    else:
        growth_tracker[0] = successful
