"""Fused elementwise kernels: the surface ember-compile generates its kernels through.

A *program* is a straight-line chain of ember's built-in scalar functions (the ones its
elementwise ops apply to each element, `_backends.scalar`): ember-compile turns a group
of elementwise nodes of a captured graph into one, and this module makes it one kernel
with ember's one kernel generator — the same loop templates as the built-in ops, the
same executor (contiguous fast path, merged-dims strided loop, parallel above a size
threshold), on the CPU and on CUDA. Each intermediate value is rounded to the compute
dtype as the eager op would store it, so a fused chain gives eager ember's results bit
for bit.

On the CPU the kernel module is written into ember's kernel cache directory, named by a
hash of its source and keyed (like the built-in kernels) by `scalar.py` and the versions,
so Numba caches the compiled loops on disk and a second process pays no compile. On CUDA
the scalar function is compiled in memory once per process, like ``ember.kernel``'s.

A `FusedReduction` is such a program whose values are reduced (sum, mean, amax, amin over
all elements or over dims) as they are computed, in one generated reduction loop: the
program's values are never written to memory (CPU and CUDA). A `FusedSoftmax` is a
program whose values feed softmax or log_softmax along one dim: eager's row kernel reads
them as they are computed (CPU: a block of rows at a time in a small buffer; CUDA: in
the kernel's reads).

Declared for the layers above (they import this module, never ``ember_tensor._backends``).

>>> import ember_tensor as et
>>> from ember_tensor import fusion
>>> prog = fusion.FusedElementwise([("mul", (("in", 0), ("in", 1))), ("relu", (("step", 0),))], 2)
>>> prog(et.tensor([1., -2.]), et.tensor([3., 3.]))
tensor([3., 0.])
"""
import hashlib

from . import _backends
from . import _dtype as D
from ._ops import _iter
from ._tensor import Tensor

__all__ = ["FusedElementwise", "FusedReduction", "FusedSoftmax", "OPS", "COMPARISONS", "REDUCTIONS"]

# Scalar functions of `_backends.scalar` a program may apply, by arity.
UNARY = frozenset({"neg", "relu", "sigmoid", "tanh", "exp", "log", "abs", "sqrt", "rsqrt", "reciprocal",
                   "square", "sin", "cos", "expm1", "log1p"})
BINARY = frozenset({"add", "sub", "mul", "div", "maximum", "minimum", "gt", "lt", "ge", "le", "eq", "ne"})
TERNARY = frozenset({"where"})
OPS = UNARY | BINARY | TERNARY
# Their results are bools, not the compute dtype.
COMPARISONS = frozenset({"gt", "lt", "ge", "le", "eq", "ne"})
_ARITY = {**{n: 1 for n in UNARY}, **{n: 2 for n in BINARY}, **{n: 3 for n in TERNARY}}
_COMPUTE = {"float32": D.float32, "float64": D.float64}


class FusedElementwise:
    """One fused elementwise program, runnable on float32/float64 tensors (CPU, CUDA).

    Args:
        steps: ``[(op, args), ...]``, each op a name of `OPS`, each argument ``("in", i)``
            (input `i`), ``("step", j)`` (the result of step `j`) or a Python number (a
            constant of the compute dtype). The last step is the result.
        n_inputs: how many tensor inputs the program takes.
        name: the function's name in the generated source.
    """

    def __init__(self, steps, n_inputs, name="fused"):
        self.steps = [(op, tuple(args)) for op, args in steps]
        self.n_inputs = n_inputs
        self.name = name
        for j, (op, args) in enumerate(self.steps):
            if op not in OPS:
                raise ValueError(f"fusion: {op!r} is not a fusible scalar function (one of {sorted(OPS)})")
            if len(args) != _ARITY[op]:
                raise ValueError(f"fusion: {op} takes {_ARITY[op]} arguments, step {j} gives {len(args)}")
            for a in args:
                if isinstance(a, tuple):
                    kind, index = a
                    if (kind == "in" and not 0 <= index < n_inputs) or (kind == "step" and not 0 <= index < j) \
                            or kind not in ("in", "step"):
                        raise ValueError(f"fusion: step {j} refers to {a}, which is not defined before it")
                elif isinstance(a, bool) or not isinstance(a, (int, float)):
                    raise ValueError(f"fusion: constants are ints or floats, step {j} has {a!r}")
        self.result_is_bool = self.steps[-1][0] in COMPARISONS
        # Inputs read only as conditions of `where` are bool tensors; every other input is
        # of the compute dtype.
        self.bool_inputs = frozenset(i for i in range(n_inputs) if self._only_conditions(("in", i)))
        self._sources = {}
        self._kernels = {}   # compute dtype -> (module name, source)
        self._used = tuple(sorted({op for op, _ in self.steps}))

    def _only_conditions(self, ref):
        uses = [(op, k) for op, args in self.steps for k, a in enumerate(args) if a == ref]
        return bool(uses) and all(op == "where" and k == 0 for op, k in uses)

    def source(self, dtype):
        """The Python source of the scalar function for `dtype` (an ember float dtype).

        Scalar functions are called by their names in `_backends.scalar`; ``T`` is the
        compute dtype's constructor, rounding each intermediate as the eager op stores it.
        """
        key = dtype.np.name
        found = self._sources.get(key)
        if found is not None:
            return found
        params = ", ".join(f"x{i}" for i in range(self.n_inputs))
        lines = [f"def {self.name}({params}):"]
        for j, (op, args) in enumerate(self.steps):
            call = f"{op}({', '.join(self._argument(a) for a in args)})"
            lines.append(f"    t{j} = {call if op in COMPARISONS else f'T({call})'}")
        lines.append(f"    return t{len(self.steps) - 1}")
        text = "\n".join(lines) + "\n"
        self._sources[key] = text
        return text

    @staticmethod
    def _argument(a):
        if isinstance(a, tuple):
            return ("x" if a[0] == "in" else "t") + str(a[1])
        return f"T({float(a)!r})" if isinstance(a, float) else f"T({a!r})"

    def kernel_name(self, dtype):
        """The generated module's name for `dtype`: a hash of the source (the cache key)."""
        text = self.source(dtype) + dtype.np.name
        return "ember_fused_" + hashlib.sha256(text.encode()).hexdigest()[:20]

    def compute_dtype(self, tensors):
        """The compute dtype the program runs `tensors` in, or None when it does not take
        them (another dtype, mixed dtypes or devices, non-tensors): run the eager ops then."""
        dtype = device = None
        for i, t in enumerate(tensors):
            if t.__class__ is not Tensor and not isinstance(t, Tensor):
                return None
            if device is None:
                device = t._device
            elif t._device != device:
                return None
            if i in self.bool_inputs:
                if t._dtype is not D.bool:
                    return None
            elif dtype is None:
                dtype = t._dtype
                if dtype is not D.float32 and dtype is not D.float64:
                    return None
            elif t._dtype is not dtype:
                return None
        return dtype

    def __call__(self, *tensors, dtype=None, reuse=None):
        """Run the program on `tensors` (broadcast together) into a new tensor, or into
        the memory of input `reuse`.

        Args:
            tensors: the inputs, on one device, of one float dtype (bools for `where`'s
                conditions).
            dtype: their compute dtype when the caller has it from `compute_dtype`.
            reuse: the index of an input whose value the caller no longer needs (nothing
                else holds its memory). When that input is contiguous with the result's
                shape and dtype the result is written into it and it is returned (its
                version bumped): each element is read before the same element is written,
                so the values are those of a new tensor. Otherwise a new tensor.
        """
        if len(tensors) != self.n_inputs:
            raise TypeError(f"{self.name}() takes {self.n_inputs} tensors, got {len(tensors)}")
        if dtype is None:
            dtype = self.compute_dtype(tensors)
            if dtype is None:
                raise TypeError(f"{self.name}(): a fused kernel takes tensors of one device and one float dtype "
                                f"(float32 or float64), got " + ", ".join(
                                    f"{type(t).__name__}" if not isinstance(t, Tensor)
                                    else f"{t._dtype} on {t._device}" for t in tensors))
        device = tensors[0]._device
        arrays = [t._data for t in tensors]
        shape = arrays[0].shape
        if any(a.shape != shape for a in arrays):
            shape = _iter.broadcast_shapes(*(a.shape for a in arrays))
            arrays = [_iter.operand_array(t, t._dtype, device, shape) for t in tensors]
        result_dtype = D.bool if self.result_is_bool else dtype
        backend = _backends.get(device)
        target = tensors[reuse] if reuse is not None else None
        if target is not None and (target._dtype is not result_dtype or target._data.shape != shape
                                   or not backend.storage.is_contiguous(target._data)):
            target = None   # broadcasting enlarges it, or another dtype or layout: a new tensor
        out = backend.storage.empty(shape, result_dtype.np) if target is None else target._data
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = (self.kernel_name(dtype), self.source(dtype))
        backend.custom.launch_fused(kernel[0], kernel[1], self.name, self._used, dtype.np, arrays, out,
                                    None if target is None else reuse)
        if target is not None:
            target._bump_version()
            return target
        return Tensor._wrap(out, result_dtype, device)


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
        if dtype is None:
            return None
        try:
            shape = _iter.broadcast_shapes(*(t._data.shape for t in tensors))
        except RuntimeError:
            return None
        if 0 in shape or self._dims(len(shape)) is None:
            return None
        return dtype

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
        shape = _iter.broadcast_shapes(*(t._data.shape for t in tensors))
        dims = self._dims(len(shape))
        if not _innermost(shape, dims):
            # Eager reduces such dims with its own layouts (on the CPU by columns, faster
            # than a per-output loop striding along them): the program runs as one fused
            # elementwise kernel, then that reduction.
            values = self.program(*tensors, dtype=dtype)
            reduced = getattr(values, self.kind)(dim=dims, keepdim=self.keepdim)
            return reduced if self.epilogue is None else self.epilogue(reduced, dtype=dtype, reuse=0)
        backend = _backends.get(device)
        arrays = [_iter.operand_array(t, t._dtype, device, shape) for t in tensors]
        # (a 0-d operand comes as it is: every operand a view of the one shape)
        arrays = [a if a.shape == shape else backend.storage.broadcast_to(a, shape) for a in arrays]
        kept = tuple(n for d, n in enumerate(shape) if d not in dims)
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
            out = out.reshape(tuple(1 if d in dims else n for d, n in enumerate(shape)))
        return Tensor._wrap(out, dtype, device)


class FusedSoftmax:
    """A `FusedElementwise` program whose values feed softmax or log_softmax (CPU, CUDA).

    ``FusedSoftmax(program, dim=-1)(x, m)`` equals ``program(x, m).softmax(-1)`` bit for
    bit: eager's softmax row kernel (its max, its exp sums in its order) runs on the
    program's values, which are computed for it a block of rows at a time (CPU) or as
    it reads them (CUDA), never stored as a whole. Along a dim that is not the last
    (size-1 dims aside) the program runs as one fused elementwise kernel and then
    eager's softmax (its column kernel).

    Args:
        program: the `FusedElementwise` whose values are normalised (not a comparison).
        dim: the softmax's dim (an int), wrapped per call against the broadcast shape.
        log: log_softmax instead of softmax.

    >>> import ember_tensor as et
    >>> prog = FusedElementwise([("mul", (("in", 0), 2.0))], 1)
    >>> FusedSoftmax(prog, dim=-1)(et.tensor([0., 0.]))
    tensor([0.5000, 0.5000])
    """

    def __init__(self, program, dim, log=False):
        if program.result_is_bool:
            raise ValueError("fusion: a softmax of a comparison's bools is not fused")
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ValueError(f"fusion: a fused softmax takes an int dim, got {dim!r}")
        self.program = program
        self.dim = dim
        self.log = log
        self.steps = program.steps
        self.name = program.name
        self.result_is_bool = False
        self._kernels = {}   # compute dtype -> (module name, the program's source)

    def compute_dtype(self, tensors):
        """The compute dtype the fused softmax runs `tensors` in, or None when it does not
        take them (see `FusedElementwise.compute_dtype`; also an empty or 0-d broadcast
        shape, a dim out of range): run the eager ops then, which raise their errors."""
        dtype = self.program.compute_dtype(tensors)
        if dtype is None:
            return None
        try:
            shape = _iter.broadcast_shapes(*(t._data.shape for t in tensors))
        except RuntimeError:
            return None
        if not shape or 0 in shape or not -len(shape) <= self.dim < len(shape):
            return None
        return dtype

    def kernel_name(self, dtype):
        """The generated module's name for `dtype`: a hash of the program and the softmax."""
        text = f"{self.program.source(dtype)}{dtype.np.name}\n{'log_softmax' if self.log else 'softmax'}"
        return "ember_fused_softmax_" + hashlib.sha256(text.encode()).hexdigest()[:20]

    def source(self, dtype):
        """The program's scalar function for `dtype` and, as a comment, the softmax its
        values feed."""
        return (self.program.source(dtype) +
                f"# normalised by eager's row kernel: {'log_softmax' if self.log else 'softmax'}(dim={self.dim})\n")

    def __call__(self, *tensors, dtype=None):
        """softmax (log_softmax) of the program's values on `tensors` (broadcast together)
        into a new tensor.

        Args:
            tensors: the inputs, as `FusedElementwise` takes them, of a non-empty
                broadcast shape of at least one dim.
            dtype: their compute dtype when the caller has it from `compute_dtype`.
        """
        if dtype is None:
            dtype = self.compute_dtype(tensors)
            if dtype is None:
                raise TypeError(f"{self.name}(): a fused softmax takes non-empty tensors of one device and one "
                                f"float dtype (float32 or float64), of at least one dim, and a dim their shape has")
        device = tensors[0]._device
        shape = _iter.broadcast_shapes(*(t._data.shape for t in tensors))
        axis = self.dim % len(shape)
        if any(n != 1 for n in shape[axis + 1:]):
            # Eager's column kernel walks blocks of columns: the program runs as one fused
            # elementwise kernel, then that softmax.
            values = self.program(*tensors, dtype=dtype)
            return values.log_softmax(axis) if self.log else values.softmax(axis)
        backend = _backends.get(device)
        arrays = [_iter.operand_array(t, t._dtype, device, shape) for t in tensors]
        arrays = [a if a.shape == shape else backend.storage.broadcast_to(a, shape) for a in arrays]
        size = shape[axis]
        out = backend.storage.empty((_numel(shape) // size, size), dtype.np)
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = (self.kernel_name(dtype), self.program.source(dtype))
        backend.custom.launch_fused_softmax(kernel[0], kernel[1], self.program.name, self.program._used, dtype.np,
                                            self.log, arrays, axis, out)
        return Tensor._wrap(out.reshape(shape), dtype, device)


def _numel(shape):
    count = 1
    for n in shape:
        count *= n
    return count
