"""``ember.kernel``: a scalar Python function becomes an elementwise op on tensors.

    >>> import math, ember_tensor as torch
    >>> @torch.kernel(grad=[lambda x: 1 / (1 + math.exp(-x)) * (1 + x * (1 - 1 / (1 + math.exp(-x))))])
    ... def swish(x):
    ...     return x / (1 + math.exp(-x))
    >>> swish(torch.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])

Functions a kernel calls must be marked ``@ember.kernel.helper`` (Numba compiles them
into the kernel, for the CPU and for CUDA). The op broadcasts its tensor arguments, promotes dtypes as PyTorch's elementwise ops do
(Python numbers do not up-cast a tensor), takes ``out=``, runs on the CPU (parallel for
large tensors) and on CUDA from the same source, and goes through the dispatcher like a
built-in op, so autograd, the profiler and tracing see it (its name is
``custom::<name>``). With ``grad=`` (one derivative function per input, each taking the
same arguments as the op) it is differentiable; when the derivatives are kernels with
``grad=`` of their own, to any order.
"""
import functools
import inspect
import re

from .. import _autograd_slot, _backends, _dispatch
from .. import _dtype as D
from .._tensor import Tensor
from .._ops import _iter

__all__ = ["kernel", "CustomKernel"]


class CustomKernel:
    """One user kernel: its op, its derivatives (its backends keep the compiled loops)."""

    def __init__(self, fn, name, grad, out_dtype):
        self.fn = fn
        self.name = name or fn.__name__
        self.params = _positional_parameters(fn)
        self.out_dtype = None if out_dtype is None else D.to_dtype(out_dtype)
        self._return_kinds = {}
        self.op = self._register()
        self.derivatives = None if grad is None else self._derivative_ops(grad)
        if self.derivatives is not None:
            self._declare_derivative()

    # --- the op ---------------------------------------------------------------------------

    def _register(self):
        custom = self

        def impl(*args, out=None):
            return custom.call(args, out)

        impl.__doc__ = self.fn.__doc__
        impl.__name__ = self.name
        impl.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in self.params]
            + [inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)])
        op = _dispatch.Operator(f"custom::{self.name}", impl)
        op.__name__ = op.__qualname__ = self.name
        op.kernel = self
        # A kernel defined again (a re-run notebook cell) replaces the older one.
        _dispatch._OPERATORS[op.name] = op
        functools.update_wrapper(op, self.fn, assigned=("__doc__", "__module__"), updated=())
        return op

    def call(self, args, out=None):
        """Run the kernel on ``args`` (tensors and Python numbers), as the op does."""
        if len(args) != len(self.params):
            raise TypeError(f"{self.name}() takes {len(self.params)} positional argument"
                            f"{'s' if len(self.params) != 1 else ''} but {len(args)} were given")
        if not any(isinstance(a, Tensor) for a in args):
            raise TypeError(f"{self.name}(): expected at least one Tensor argument, got "
                            f"{', '.join(type(a).__name__ for a in args)}")
        device = _iter.common_device(args)
        dtype = D.result_type_of(args)
        compute = _iter.compute_dtype(dtype)
        result_dtype = self.out_dtype or self._result_dtype(dtype, compute)
        write = _iter.compute_dtype(result_dtype)
        shape = _iter.broadcast_shapes(*(tuple(a._data.shape) for a in args if isinstance(a, Tensor)))
        operands = [_iter.operand_array(a, compute, device, shape) for a in args]
        backend = _backends.get(device)
        if out is not None:
            _iter.check_out_cast(result_dtype, out._dtype)
            _iter.resize_out(out, shape)
        target = backend.storage.empty(shape, write.np)
        self._run(device, operands, target, compute)
        if out is not None:
            backend.storage.copy_(out._data, target)
            out._bump_version()
            return out
        if result_dtype is not write:
            target = backend.storage.astype(target, result_dtype.np)
        return Tensor._wrap(target, result_dtype, device)

    def _result_dtype(self, dtype, compute):
        """The result's dtype: its kind is what the function returns, its width PyTorch's.

        Typed once per input dtype by Numba: a float-returning function of integer tensors
        gives the default float dtype (as ``torch.sigmoid`` of an int tensor does); one of
        float tensors keeps their dtype even where Numba widens (``float32 * 1.0`` is
        float64 in Numba); a comparison gives bool.
        """
        kind = self._return_kinds.get(compute)
        if kind is None:
            kind = self._return_kinds[compute] = _return_kind(self.fn, compute, len(self.params))
        if kind == "bool":
            return D.bool
        if kind == "float" and not dtype.is_floating_point:
            return D.get_default_dtype()
        return dtype

    def _run(self, device, operands, target, compute):
        try:
            _backends.get(device).custom.launch_elementwise(self.fn, operands, target)
        except Exception as error:
            if type(error).__module__.startswith("numba"):
                raise _compile_error(self, error, compute) from None
            raise

    # --- derivatives ----------------------------------------------------------------------

    def _derivative_ops(self, grad):
        grads = list(grad) if isinstance(grad, (list, tuple)) else [grad]
        if len(grads) != len(self.params):
            raise ValueError(f"kernel {self.name}: grad= needs one derivative per input ({len(self.params)}), "
                             f"got {len(grads)}")
        ops = []
        for i, g in enumerate(grads):
            if g is None or isinstance(getattr(g, "kernel", None), CustomKernel):
                ops.append(g)
            else:
                ops.append(CustomKernel(g, f"{self.name}_grad_{self.params[i]}", None, None).op)
        return ops

    def _declare_derivative(self):
        derivatives = self.derivatives

        def backward(ctx, grad, *inputs):
            return tuple(None if d is None or not isinstance(x, Tensor) else grad * d(*inputs)
                         for d, x in zip(derivatives, inputs))

        node_name = "".join(part.capitalize() for part in self.name.split("_")) + "Backward0"
        _autograd_slot.declare_derivative(self.op.name, inputs=tuple(self.params), save=lambda *a, **k: a,
                                          backward=backward, node_name=node_name)


def _return_kind(fn, compute, arity):
    """'bool', 'int' or 'float': what ``fn`` returns for ``arity`` arguments of ``compute``."""
    import numba
    from numba.core import types

    dispatcher = numba.njit(error_model="numpy")(fn)
    signature = (numba.from_dtype(compute.np),) * arity
    try:
        dispatcher.compile(signature)
    except Exception as error:
        if type(error).__module__.startswith("numba"):
            raise _compile_error_for(fn, fn.__name__, error, compute) from None
        raise
    returned = dispatcher.overloads[signature].signature.return_type
    if isinstance(returned, types.Boolean):
        return "bool"
    if isinstance(returned, types.Integer):
        return "int"
    if isinstance(returned, types.Float):
        return "float"
    raise TypeError(f"ember.kernel {fn.__name__}: the function must return a number or a bool for each element, "
                    f"it returns {returned}")


def _positional_parameters(fn):
    if not callable(fn):
        raise TypeError(f"kernel() expects a function, got {type(fn).__name__}")
    params = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.default is not p.empty:
            raise TypeError(f"kernel {fn.__name__}: every parameter must be a plain positional one (one scalar "
                            f"per element); {p.name!r} is not")
        params.append(p.name)
    if not params:
        raise TypeError(f"kernel {fn.__name__}: a kernel takes at least one argument")
    return params


def _compile_error(custom, error, compute):
    return _compile_error_for(custom.fn, custom.name, error, compute)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _compile_error_for(fn, name, error, compute):
    """Numba's error, reduced to what the user needs: which line of their function, and why."""
    text = _ANSI.sub("", str(error))
    source = inspect.getsourcefile(fn) or fn.__code__.co_filename
    lines = re.findall(r'File "([^"]+)", line (\d+)', text)
    where = next((f"{f}, line {n}" for f, n in lines if f == source), None)
    if where is None:
        where = f"{source}, line {fn.__code__.co_firstlineno}"
    reasons = [line.strip() for line in text.splitlines()
               if line.strip() and not line.startswith(("Failed in", "File ", "During:", "<source", "-"))]
    reason = reasons[0] if reasons else text.strip()
    return TypeError(f"ember.kernel {name}: Numba cannot compile {fn.__name__}() for {compute} inputs ({where}): "
                     f"{reason}\nA kernel body may use arithmetic, comparisons, if/else, loops and the math "
                     f"module on numbers; not Python objects, lists or strings.")


def kernel(fn=None, *, name=None, grad=None, out_dtype=None):
    """Turn a scalar Python function into an elementwise op over tensors (CPU and CUDA).

    Args:
        fn: ``f(a, b, ...) -> scalar``, written for one element of each input.
        name: the op's name (default: the function's); registered as ``custom::<name>``.
        grad: derivatives, one per input, each ``d(a, b, ...) -> df/dinput`` (plain
            functions or kernels); None for an input with no gradient.
        out_dtype: the result's dtype (default: the inputs' promoted dtype).

    Returns:
        The op: call it with tensors and numbers, ``out=`` allowed.

    Example:
        >>> import ember_tensor as torch
        >>> @torch.kernel
        ... def axpy(a, x, y):
        ...     return a * x + y
        >>> axpy(2.0, torch.ones(3), torch.arange(3.0))
        tensor([2., 3., 4.])
    """
    if fn is None:
        return functools.partial(kernel, name=name, grad=grad, out_dtype=out_dtype)
    return CustomKernel(fn, name, grad, out_dtype).op


def helper(fn):
    """Make a plain scalar function callable from kernel bodies (on the CPU and on CUDA).

    Example:
        >>> import math, ember_tensor as torch
        >>> @torch.kernel.helper
        ... def sigmoid(x):
        ...     return 1 / (1 + math.exp(-x))
        >>> @torch.kernel
        ... def swish(x):
        ...     return x * sigmoid(x)
        >>> swish(torch.tensor([0.0, 2.0]))
        tensor([0.0000, 1.7616])
    """
    from numba.extending import register_jitable

    return register_jitable(fn)


kernel.helper = helper
