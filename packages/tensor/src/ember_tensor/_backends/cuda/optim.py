"""CUDA fused optimizer steps: SGD and Adam/AdamW, and AMP's check-and-unscale, as
multi-tensor kernels (`kernels/fused_optim.py`, PyTorch's multi_tensor_apply): one launch
per compute dtype covers up to a kernel's capacity of parameters, and launches again when
the table fills. Adagrad has none, as in PyTorch (a declared gap).

The same functions as `_backends.cpu.optim`. AMP's `grad_scale`/`found_inf` and step
counters kept on the device (PyTorch's `fused=True` state) are read by the kernels on the
device, so a step never copies a value to the host; a host value is uploaded, never read
back. Half-precision and strided arrays go through float32 or contiguous work copies
(`FlatOperands`), written back after the launches. The steps return, per parameter,
whether they wrote it (False for an empty one).
"""
import numpy as np

from . import arrays, launch, runtime, storage
from ..flat_operands import FlatOperands
from .kernels import fused_optim as K

__all__ = ["sgd", "adam", "non_finite_check_and_unscale", "update_scale"]

_FLOAT32 = np.dtype(np.float32)
_placeholders = {}
_paddings = {}


def _placeholder():
    """A 1-element float32 device array passed where a kernel argument is absent."""
    index = runtime.current_index()
    arr = _placeholders.get(index)
    if arr is None:
        arr = _placeholders[index] = storage.fill_(storage.empty((1,), np.float32), 0.0)
    return arr


def _amp_arrays(grad_scale, found_inf):
    """Device arrays for grad_scale/found_inf (a placeholder when absent) and their flag bits."""
    flags, found = 0, []
    for value, bit in ((grad_scale, K.HAS_GRAD_SCALE), (found_inf, K.HAS_FOUND_INF)):
        if value is None:
            found.append(_placeholder())
            continue
        flags |= bit
        if arrays.is_array(value):
            found.append(arrays.flat(value))
        else:  # a host (or other GPU's) value: uploaded, never read back
            found.append(storage.from_numpy(np.asarray(value, np.float32).reshape(1)))
    return flags, found


def _compute(dtype):
    return _FLOAT32 if dtype.itemsize == 2 else dtype  # half types in float32


class _Table:
    """The rows (one tuple of flat arrays per parameter) of the multi-tensor launches of one
    compute dtype, with the `FlatOperands` that made them."""

    def __init__(self, compute):
        self.compute = compute
        self.operands = FlatOperands(storage, compute)
        self.rows = []


def _table_of(key, tables):
    """The `_Table` of `key` (its first item the compute dtype) in `tables`, made on first use."""
    table = tables.get(key)
    if table is None:
        table = tables[key] = _Table(key[0])
    return table


# A launch of at most this many rows pads its tuples only to it (when the capacity is at
# least twice as large): Numba marshals every array argument on the host, padding
# included, and a small model (an MLP's 6 parameters, AMP's few gradients) would otherwise
# pay for 64 arrays a launch. Two widths: two specialisations per kernel and dtype.
_SMALL_ROWS = 8


def _launch_multi(kernel, capacity, rows, *args):
    """Launch `kernel` over `rows` (tuples of flat arrays, one per parameter), `capacity` rows
    at a time: its arguments are one tuple per column, padded to `capacity` (or to
    `_SMALL_ROWS` for a small last launch), the count of rows used, then `args`."""
    for first in range(0, len(rows), capacity):
        chunk = rows[first:first + capacity]
        width = _SMALL_ROWS if len(chunk) <= _SMALL_ROWS and capacity >= 2 * _SMALL_ROWS else capacity
        columns = tuple(tuple(column) + (_padding(column[0].dtype),) * (width - len(chunk))
                        for column in zip(*chunk))
        launch.grid_stride(kernel, max(row[0].shape[0] for row in chunk), *columns, np.int64(len(chunk)), *args)


def sgd(params, grads, bufs, grad_scale, found_inf, *, lr, weight_decay, momentum, dampening, nesterov, maximize,
        first_step):
    """One SGD step of every array of `params` (with its momentum buffer in `bufs`, or
    `bufs` None), in place: one launch per compute dtype and `SGD_CAPACITY` parameters."""
    flags, (scale_arr, found_arr) = _amp_arrays(grad_scale, found_inf)
    flags |= ((K.SGD_NESTEROV if nesterov else 0) | (K.SGD_MAXIMIZE if maximize else 0)
              | (K.SGD_FIRST_STEP if first_step else 0))
    tables = {}
    for i, param in enumerate(params):
        if param.size == 0:
            continue
        table = _table_of((_compute(param.dtype),), tables)
        operands = table.operands
        p = operands(param)
        g = operands(grads[i], written=grad_scale is not None)
        b = operands(bufs[i]) if bufs is not None else p  # never touched when momentum is 0
        table.rows.append((p, g, b))
    for table in tables.values():
        scalar = table.compute.type
        _launch_multi(K.sgd_kernel(table.compute), K.SGD_CAPACITY, table.rows, scale_arr, found_arr, scalar(lr),
                      scalar(weight_decay), scalar(momentum), scalar(1 - dampening), np.int64(flags))
        table.operands.write_back()
    return [param.size != 0 for param in params]


def adam(params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps, grad_scale, found_inf, *, lr, beta1, beta2,
         weight_decay, eps, amsgrad, maximize, decoupled):
    """One Adam (AdamW with `decoupled`) step of every array of `params` and its moments,
    in place: one launch per compute dtype and `ADAM_CAPACITY` parameters. Each of `steps`
    counts this step of its parameter: a one-element device array (read by the kernel) or
    a number (the bias corrections are then host math, and parameters whose counts differ
    go in different launches)."""
    flags, (scale_arr, found_arr) = _amp_arrays(grad_scale, found_inf)
    weight1 = 1 - beta1
    coupled = weight_decay != 0 and not decoupled
    flags |= ((K.ADAM_AMSGRAD if amsgrad else 0) | (K.ADAM_COUPLED_DECAY if coupled else 0)
              | (K.ADAM_LERP_LOW if weight1 < 0.5 else 0))
    tables = {}  # (compute dtype, host step or None) -> _Table
    for i, param in enumerate(params):
        if param.size == 0:
            continue
        step = steps[i]
        on_device = arrays.is_array(step)
        table = _table_of((_compute(param.dtype), None if on_device else step), tables)
        operands = table.operands
        p, m, v = operands(param), operands(exp_avgs[i]), operands(exp_avg_sqs[i])
        g = operands(grads[i], written=grad_scale is not None)
        vmax = operands(max_sqs[i]) if amsgrad else p  # never touched without amsgrad
        # PyTorch's fused=True keeps the step on the device: the kernel reads it there.
        step_arr = (arrays.flat(step if step.dtype == _FLOAT32 else storage.astype(step, _FLOAT32)) if on_device
                    else _placeholder())
        table.rows.append((p, g, m, v, vmax, step_arr))
    for (compute, host_step), table in tables.items():
        if host_step is None:  # computed by the kernel from each device step
            table_flags, step_size, bias_correction2_sqrt = flags | K.ADAM_DEVICE_STEP, 1.0, 1.0
        else:
            table_flags = flags
            step_size = lr / (1 - beta1 ** host_step)
            bias_correction2_sqrt = (1 - beta2 ** host_step) ** 0.5
        scalar = compute.type
        _launch_multi(
            K.adam_kernel(compute), K.ADAM_CAPACITY, table.rows, scale_arr, found_arr,
            scalar(-1 if maximize else 1), scalar(weight_decay),
            scalar(1 - lr * weight_decay if decoupled else 1), scalar(weight1), scalar(1 - weight1),
            scalar(beta2), scalar(1 - beta2), scalar(eps), scalar(step_size), scalar(bias_correction2_sqrt),
            np.float64(lr), np.float64(beta1), np.float64(beta2), np.int64(table_flags))
        table.operands.write_back()
    return [param.size != 0 for param in params]


def _device_scalar(value):
    """A one-element float32 device array: `value`'s own when it is one, else uploaded."""
    if arrays.is_array(value):
        return arrays.flat(value)
    return storage.from_numpy(np.asarray(value, np.float32).reshape(1))


def non_finite_check_and_unscale(grads, found_inf, inv_scale):
    """AMP's unscale: every array of `grads` multiplied by `inv_scale` in place, with
    `found_inf` set to 1.0 on the device if any element of any was inf or nan (nothing is
    read back to the host). One multi-tensor kernel launch per compute dtype covers up to
    `MULTI_TENSOR_CAPACITY` gradients (PyTorch's multi_tensor_apply, which also launches
    again when its table fills); half-precision and strided gradients go through float32
    work copies, written back after the launch."""
    found = arrays.flat(found_inf)
    scale = _device_scalar(inv_scale)
    tables = {}
    for grad in grads:
        if grad.size == 0:
            continue
        table = _table_of((_compute(grad.dtype),), tables)
        table.rows.append((table.operands(grad),))
    for table in tables.values():
        _launch_multi(K.check_and_unscale_kernel(table.compute), K.MULTI_TENSOR_CAPACITY, table.rows, found, scale)
        table.operands.write_back()


def _padding(dtype):
    """A 1-element device array of `dtype` filling the unused places of a multi-tensor
    launch's tuple (never read: the kernel stops at the count)."""
    key = (runtime.current_index(), np.dtype(dtype))
    arr = _paddings.get(key)
    if arr is None:
        arr = _paddings[key] = storage.fill_(storage.empty((1,), dtype), 0.0)
    return arr


def update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval):
    """AMP's scale update, in place on one-element device arrays, by one device thread."""
    launch.grid_stride(K.update_scale, 1, arrays.flat(scale), arrays.flat(growth_tracker),
                       _device_scalar(found_inf), np.float64(growth_factor), np.float64(backoff_factor),
                       np.int64(growth_interval))
