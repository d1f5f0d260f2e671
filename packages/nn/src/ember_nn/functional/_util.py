"""Helpers shared by the functional modules: reductions, legacy reduction flags,
unbatched inputs, in-place results, and functions called through a composite op."""
import functools
import warnings

from ember_tensor import Tensor, dispatch, nn_ops

__all__ = ["legacy_reduction", "apply_inplace", "batched", "check_tensor", "composite_op",
           "through_composite_op", "nondeterministic_backward"]


def composite_op(name, fn):
    """`fn` registered as ember-tensor dispatcher op `name`, one made of other ops
    (``Operator.composite``): autograd differentiates it through its parts, and autocast's
    op lists, the profiler and traces see a call by `name` (ATen's name: autocast runs
    ``ctc_loss`` in float32 on the CPU, as PyTorch's list says)."""
    return dispatch.op(name, composite=True)(fn)


def through_composite_op(name, fn):
    """A function like `fn` (its signature and docstring) that calls it through
    `composite_op(name, fn)`; torch.fx and the docs see a plain function."""
    operator = composite_op(name, fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return operator(*args, **kwargs)
    return call


def legacy_reduction(size_average, reduce_, reduction):
    """PyTorch's mapping of the deprecated size_average/reduce flags to `reduction`."""
    if size_average is None and reduce_ is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='"
                  f"{_legacy(size_average, reduce_)}' instead.", stacklevel=3)
    return _legacy(size_average, reduce_)


def _legacy(size_average, reduce_):
    size_average = True if size_average is None else size_average
    reduce_ = True if reduce_ is None else reduce_
    if not reduce_:
        return "none"
    return "mean" if size_average else "sum"


def apply_inplace(input, formula, inplace):
    """`formula(input)`, written into `input` when `inplace` (the functional `inplace=True` form).

    In place, the formula runs on a copy of an input that requires grad: its backward may
    need the values the write replaces (silu's, mish's, leaky_relu's input), and saving
    `input` itself would fail backward's version check. PyTorch's in-place activations keep
    their original input the same way, so `leaky_relu(x.clone(), inplace=True)` backs up.
    """
    if not inplace:
        return formula(input)
    source = input.clone() if input.requires_grad else input
    return input.copy_(formula(source))


def batched(input, nd, name):
    """(input with a batch dim, whether one was added) for ops taking (C, *S) or (N, C, *S)."""
    check_tensor(input, name)
    if input.dim() == nd + 1:
        return input.unsqueeze(0), True
    if input.dim() == nd + 2:
        return input, False
    raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D input, but got input of size: "
                       f"{list(input.shape)}")


def check_tensor(value, name, argument="input"):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")


def nondeterministic_backward(out, caller):
    """`out`, marked (`nn_ops.nondeterministic_backward`) so that its backward alerts as
    PyTorch's CUDA backward kernel `caller` does under `use_deterministic_algorithms`, and
    its node carries PyTorch's name (ReflectionPad2DBackward0, ...). Only a result that
    requires grad is marked: inference stays free of the extra view op."""
    if out.requires_grad:
        return nn_ops.nondeterministic_backward(out, caller)
    return out
