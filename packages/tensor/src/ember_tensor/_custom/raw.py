"""``ember.raw_kernel``: an op from hand-written Numba loops, with a user-given backward.

For what an elementwise or reduce kernel cannot say (stencils, solvers, scans): the user
writes the loop over NumPy-like arrays (their shapes and strides are the tensors'), once
for the CPU (compiled with ``numba.njit(parallel=True)``, so ``numba.prange`` spreads it
over cores) and optionally once for CUDA (compiled with ``numba.cuda.jit`` and launched
with one thread per output element: use ``cuda.grid(1)``/``cuda.gridsize(1)``). The output
is allocated by ember from ``output(*inputs) -> (shape, dtype)`` and passed first.

    >>> import ember_tensor as torch
    >>> from numba import prange
    >>> def shift_add(out, x):
    ...     for i in prange(out.shape[0]):
    ...         out[i] = x[i] + (x[i - 1] if i else 0.0)
    >>> op = torch.raw_kernel(shift_add, output=lambda x: (x.shape, x.dtype))
    >>> op(torch.tensor([1.0, 2.0, 3.0]))
    tensor([1., 3., 5.])
"""
import functools

from .. import _autograd_slot, _backends, _dispatch
from .. import _dtype as D
from .._tensor import Tensor
from .._ops import _iter

__all__ = ["raw_kernel"]


class RawKernel:
    """One user op: CPU loop, optional CUDA kernel, output spec and backward."""

    def __init__(self, cpu, cuda, output, backward, name, inputs):
        self.cpu_source = cpu
        self.cuda_source = cuda
        self.output = output
        self.name = name or (cpu or cuda).__name__
        custom = self

        def call(*args):
            return custom.call(args)

        call.__doc__ = (cpu or cuda).__doc__
        self.op = _dispatch.Operator(f"custom::{self.name}", call)
        self.op.__name__ = self.op.__qualname__ = self.name
        self.op.kernel = self
        _dispatch._OPERATORS[self.op.name] = self.op
        if backward is not None:
            self._declare_backward(backward, inputs)

    def call(self, args):
        tensors = [a for a in args if isinstance(a, Tensor)]
        if not tensors:
            raise TypeError(f"{self.name}(): expected at least one Tensor argument")
        device = _iter.common_device(tensors)
        shape, dtype = self.output(*args)
        dtype = D.to_dtype(dtype)
        backend = _backends.get(device)
        out = backend.storage.empty(tuple(shape), dtype.np)
        data = [a._data if isinstance(a, Tensor) else a for a in args]
        backend.custom.launch_raw(self.cpu_source, self.cuda_source, self.name, out, data)
        return Tensor._wrap(out, dtype, device)

    def _declare_backward(self, backward, inputs):
        def rule(ctx, grad, *saved):
            grads = backward(grad, *saved)
            return grads if isinstance(grads, tuple) else (grads,)

        names = inputs or [f"input{i}" for i in range(backward.__code__.co_argcount - 1)]
        # The op's parameters are positional: name them for autograd's rule table.
        import inspect

        self.op.impl.__signature__ = inspect.Signature(
            [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
        node = "".join(part.capitalize() for part in self.name.split("_")) + "Backward0"
        _autograd_slot.declare_derivative(self.op.name, inputs=tuple(names), save=lambda *a, **k: a,
                                          backward=rule, node_name=node)


def raw_kernel(cpu=None, *, cuda=None, output, backward=None, name=None, inputs=None):
    """Register hand-written Numba loops as an op.

    Args:
        cpu: ``loop(out, *inputs)`` over NumPy arrays, compiled with ``njit(parallel=True)``.
        cuda: ``kernel(out, *inputs)`` over device arrays, compiled with ``cuda.jit`` and
            launched with a grid-stride configuration covering ``out.size`` threads.
        output: ``output(*inputs) -> (shape, dtype)`` of the result.
        backward: ``backward(grad, *inputs) -> gradient or tuple of gradients`` written
            with ember ops (or other kernels); None: the op is not differentiable.
        name: the op's name; registered as ``custom::<name>``.
        inputs: names of the op's inputs (default: from ``backward``'s parameters).
    """
    if cpu is None and cuda is None:
        return functools.partial(raw_kernel, cuda=cuda, output=output, backward=backward, name=name,
                                 inputs=inputs)
    return RawKernel(cpu, cuda, output, backward, name, inputs).op
