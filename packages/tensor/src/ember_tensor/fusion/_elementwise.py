"""Fused elementwise programs: a straight-line chain of ember's scalar functions run as
one generated kernel (CPU, CUDA), each intermediate rounded as the eager op stores it."""
import hashlib

from .. import _backends
from .. import _dtype as D
from .._ops import _iter
from .._tensor import Tensor
from . import _recycling

__all__ = ["FusedElementwise", "OPS", "COMPARISONS"]

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
# How many shapes a program remembers (`FusedElementwise.broadcast_shape`).
_MEMO_SIZE = 64


class FusedElementwise:
    """One fused elementwise program, runnable on float32/float64 tensors (CPU, CUDA).

    Args:
        steps: ``[(op, args), ...]``, each op a name of `OPS`, each argument ``("in", i)``
            (input `i`), ``("step", j)`` (the result of step `j`) or a Python number (a
            constant of the compute dtype). The last step is the result.
        n_inputs: how many tensor inputs the program takes.
        name: the function's name in the generated source.

    >>> import ember_tensor as et
    >>> prog = FusedElementwise([("sub", (("in", 0), 1.0)), ("square", (("step", 0),))], 1)
    >>> prog(et.tensor([1., 3.]))
    tensor([0., 4.])
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
        self._shapes = {}    # the inputs' shapes -> their broadcast shape (see `broadcast_shape`)
        self._spares = []    # the previous result's memory, for `recycle` (at most one `_recycling.Spare`)

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

    def broadcast_shape(self, shapes):
        """The shape the arrays' `shapes` (a tuple of tuples) broadcast to, raising
        PyTorch's error when they do not; remembered per `shapes`, since a compiled call
        runs the same shapes again and again (broadcasting them costs more than a small
        kernel)."""
        shape = self._shapes.get(shapes)
        if shape is None:
            shape = _iter.broadcast_shapes(*shapes)
            if len(self._shapes) >= _MEMO_SIZE:
                self._shapes.clear()   # shapes that change every call: no memo, and no growth
            self._shapes[shapes] = shape
        return shape

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

    def __call__(self, *tensors, dtype=None, reuse=None, recycle=False):
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
            recycle: let a new result take the memory of this program's previous result
                of 1 MiB or more once nothing holds that any more (no tensor, view,
                autograd node or NumPy array: `_recycling`), instead of new memory that
                faults in page by page; the values are those of a new tensor.
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
        backend = _backends.get(device)
        arrays = [t._data for t in tensors]
        shape = arrays[0].shape
        if any(a.shape != shape for a in arrays):
            shape = self.broadcast_shape(tuple(a.shape for a in arrays))
            # (`compute_dtype` took one device and the dtypes as they are: no casts; a 0-d
            # operand comes as it is, as `_iter.operand_array` leaves it)
            arrays = [a if a.shape == shape or not a.ndim else backend.storage.broadcast_to(a, shape)
                      for a in arrays]
        result_dtype = D.bool if self.result_is_bool else dtype
        target = tensors[reuse] if reuse is not None else None
        if target is not None and (target._dtype is not result_dtype or target._data.shape != shape
                                   or not backend.storage.is_contiguous(target._data)):
            target = None   # broadcasting enlarges it, or another dtype or layout: a new tensor
        out = None
        if target is not None:
            out = target._data
        elif recycle:
            out = _recycling.take(self._spares, shape, result_dtype.np, device)
        if out is None:
            out = backend.storage.empty(shape, result_dtype.np)
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = (self.kernel_name(dtype), self.source(dtype))
        backend.custom.launch_fused(kernel[0], kernel[1], self.name, self._used, dtype.np, arrays, out,
                                    None if target is None else reuse)
        if target is not None:
            target._bump_version()
            return target
        result = Tensor._wrap(out, result_dtype, device)
        if recycle:
            _recycling.keep(self._spares, result)
        return result
