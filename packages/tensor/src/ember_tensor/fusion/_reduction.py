"""Reduction prologues: a `FusedElementwise` program's values reduced (sum, mean, amax,
amin) in the same generated loop, never stored (CPU, CUDA)."""
import hashlib

from .. import _backends
from .._tensor import Tensor
from ._elementwise import _MEMO_SIZE, FusedElementwise  # noqa: F401  (the doctest's)

__all__ = ["FusedReduction", "REDUCTIONS"]

# Reductions a `FusedReduction` computes (the built-in reductions' step, merge and final).
REDUCTIONS = frozenset({"sum", "mean", "amax", "amin"})


def _innermost(shape, dims):
    """Whether the reduced `dims` of `shape` are its innermost ones (size-1 dims aside):
    then each output reduces one run of the row-major result, as the fused loop does."""
    kept_seen = False
    for d in range(len(shape) - 1, -1, -1):
        if shape[d] == 1:
            continue
        if d in dims and kept_seen:
            return False
        kept_seen = kept_seen or d not in dims
    return True


class FusedReduction:
    """A `FusedElementwise` program reduced over dims in the same loop (CPU and CUDA).

    ``FusedReduction(program, "sum", dim=-1)(x, w)`` equals ``program(x, w).sum(-1)``
    bit for bit (the built-in reductions' blocks and block loop: float sums in float64),
    without the program's result in memory. Reductions over dims that are not the
    innermost ones (``sum(0)`` of a matrix) run the program as one fused elementwise
    kernel and then the built-in reduction (its CPU column kernel is the faster there).

    Args:
        program: the `FusedElementwise` whose values are reduced (not a comparison).
        kind: one of `REDUCTIONS`.
        dim: None (every dim; also ``()`` for amax/amin), an int or a tuple of ints, as
            the eager op takes it; wrapped per call against the broadcast shape.
        keepdim: keep the reduced dims with size 1.
        epilogue: None, or a one-input `FusedElementwise` applied to each reduced value
            (rounded to the dtype, as eager stores it) in the same kernel before it is
            stored: ``FusedReduction(p, "sum", -1, epilogue=e)(x)`` equals
            ``e(p(x).sum(-1))`` bit for bit.

    >>> import ember_tensor as et
    >>> prog = FusedElementwise([("sub", (("in", 0), ("in", 1))), ("square", (("step", 0),))], 2)
    >>> FusedReduction(prog, "mean")(et.tensor([1., 2.]), et.tensor([0., 0.]))
    tensor(2.5000)
    """

    def __init__(self, program, kind, dim=None, keepdim=False, epilogue=None):
        if kind not in REDUCTIONS:
            raise ValueError(f"fusion: {kind!r} is not a fusible reduction (one of {sorted(REDUCTIONS)})")
        if program.result_is_bool:
            raise ValueError("fusion: a reduction of a comparison's bools is not fused")
        if epilogue is not None and (epilogue.n_inputs != 1 or epilogue.result_is_bool or epilogue.bool_inputs):
            raise ValueError("fusion: a reduction's epilogue takes the reduced value alone and is not a comparison")
        self.epilogue = epilogue
        self.program = program
        self.kind = kind
        self.dim = dim
        self.keepdim = keepdim
        self.steps = program.steps + (epilogue.steps if epilogue is not None else [])
        self.name = program.name
        self.result_is_bool = False
        self._kernels = {}   # compute dtype -> module name
        self._plans = {}     # the inputs' shapes -> `_plan`'s result

    def _dims(self, ndim):
        """The wrapped, sorted dims reduced for inputs of `ndim` dims (None: not fusible)."""
        dim = self.dim
        if dim is None or (dim == () and self.kind in ("amax", "amin")):
            return tuple(range(ndim))
        dims = (dim,) if isinstance(dim, int) and not isinstance(dim, bool) else dim
        if not isinstance(dims, (tuple, list)) or not dims or \
                not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
            return None
        bound = max(ndim, 1)  # a 0-d tensor takes dim 0 / -1
        if not all(-bound <= d < bound for d in dims):
            return None
        wrapped = sorted({d % bound for d in dims})
        if len(wrapped) != len(dims):
            return None
        return tuple(wrapped) if ndim else ()

    def compute_dtype(self, tensors):
        """The compute dtype the fused reduction runs `tensors` in, or None when it does not
        take them (see `FusedElementwise.compute_dtype`; also an empty broadcast shape,
        dims the eager op would refuse): run the eager ops then, which also raise their
        errors."""
        dtype = self.program.compute_dtype(tensors)
        if dtype is None or self._plan(tuple(t._data.shape for t in tensors)) is None:
            return None
        return dtype

    def _plan(self, shapes):
        """(broadcast shape, reduced dims, whether they are the innermost, kept shape,
        keepdim shape) for inputs of `shapes`, or None when the reduction does not take
        them; remembered per `shapes` (a compiled call runs the same shapes each time)."""
        plan = self._plans.get(shapes, False)
        if plan is not False:
            return plan
        try:
            shape = self.program.broadcast_shape(shapes)
        except RuntimeError:
            shape = None
        dims = None if shape is None or 0 in shape else self._dims(len(shape))
        plan = None
        if dims is not None:
            plan = (shape, dims, _innermost(shape, dims), tuple(n for d, n in enumerate(shape) if d not in dims),
                    tuple(1 if d in dims else n for d, n in enumerate(shape)))
        if len(self._plans) >= _MEMO_SIZE:
            self._plans.clear()   # shapes that change every call: no memo, and no growth
        self._plans[shapes] = plan
        return plan

    def kernel_name(self, dtype):
        """The generated module's name for `dtype`: a hash of the program and reduction."""
        text = f"{self.program.source(dtype)}{dtype.np.name}\n{self.kind}"
        if self.epilogue is not None:
            text += "\nepilogue\n" + self.epilogue.source(dtype)
        return "ember_fused_reduce_" + hashlib.sha256(text.encode()).hexdigest()[:20]

    def source(self, dtype):
        """The program's scalar function for `dtype` and, as a comment, the reduction the
        generated loop applies to its values."""
        text = (self.program.source(dtype) +
                f"# reduced in the loop: {self.kind}(dim={self.dim!r}, keepdim={self.keepdim}), "
                f"float sums accumulated in float64\n")
        if self.epilogue is not None:
            text += "# then, on each reduced value before it is stored:\n" + self.epilogue.source(dtype)
        return text

    def __call__(self, *tensors, dtype=None):
        """Reduce the program's values on `tensors` (broadcast together) into a new tensor.

        Args:
            tensors: the inputs, as `FusedElementwise` takes them, non-empty once broadcast.
            dtype: their compute dtype when the caller has it from `compute_dtype`.
        """
        if dtype is None:
            dtype = self.compute_dtype(tensors)
            if dtype is None:
                raise TypeError(f"{self.name}(): a fused reduction takes non-empty tensors of one device and "
                                f"one float dtype (float32 or float64), and dims their shape has")
        device = tensors[0]._device
        plan = self._plan(tuple(t._data.shape for t in tensors))
        if plan is None:
            raise TypeError(f"{self.name}(): a fused reduction takes non-empty tensors of broadcastable shapes, "
                            f"and dims their shape has")
        shape, dims, innermost, kept, keepdim_shape = plan
        if not innermost:
            # Eager reduces such dims with its own layouts (on the CPU by columns, faster
            # than a per-output loop striding along them): the program runs as one fused
            # elementwise kernel, then that reduction.
            values = self.program(*tensors, dtype=dtype)
            reduced = getattr(values, self.kind)(dim=dims, keepdim=self.keepdim)
            return reduced if self.epilogue is None else self.epilogue(reduced, dtype=dtype, reuse=0)
        backend = _backends.get(device)
        # (`compute_dtype` took one device and one dtype: no casts; a 0-d operand too is
        # broadcast, every operand a view of the one shape)
        arrays = [t._data for t in tensors]
        arrays = [a if a.shape == shape else backend.storage.broadcast_to(a, shape) for a in arrays]
        out = backend.storage.empty(kept, dtype.np)
        name = self._kernels.get(dtype)
        if name is None:
            name = self._kernels[dtype] = self.kernel_name(dtype)
        program, epilogue = self.program, self.epilogue
        if epilogue is not None:
            epilogue = (epilogue.source(dtype), epilogue.name, epilogue._used)
        backend.custom.launch_fused_reduce(name, program.source(dtype), program.name, program._used, dtype.np,
                                           self.kind, arrays, dims, backend.storage.flat(out), epilogue)
        if self.keepdim:
            out = out.reshape(keepdim_shape)
        return Tensor._wrap(out, dtype, device)
