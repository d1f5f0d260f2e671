"""CPU elementwise loops: unary, binary and ternary ops over NumPy arrays (Numba kernels).

One executor, `run`, serves the built-in ops and `ember.kernel`'s alike: it takes the
loops of a scalar function — a built-in op's (`builtin`: loops generated into a module
file and cached on disk) or a user function's (`_backends.cpu.custom`: the same
generator, compiled in memory) — and picks the variant for the operands' layout. It works
like PyTorch's TensorIterator: operands arrive already broadcast to the output's shape
(stride 0 on broadcast dims) and cast to the compute dtype; same-shape contiguous
operands and scalars run a flat 1-d loop; broadcast operands whose merged dims end in a
whole row or one value a row run a row loop (unit-stride inner loop, integer strides
outside: `kernels.loops`); anything else has its dimensions merged where memory allows
and runs one 4-d strided loop. So an op compiles at most a few specializations per
dtype, never one per rank or layout.
"""
import numpy as np

from ..plan import merged_layout, pair_row_layout, row_layout
from .kernels.loops import VARIANTS, loops
from . import threads

__all__ = ["run", "builtin", "unary", "binary", "ternary", "unary_fresh", "binary_fresh", "binary_scalar_fresh"]

# From this many elements a loop is split over the thread budget (`threads.split`): handing
# ranges to pool threads costs ~20-40 us, a serial float32 add of 2**17 elements ~30 us.
PARALLEL_THRESHOLD = 1 << 17


def _is_scalar_operand(x):
    return x.__class__ is not np.ndarray or x.ndim == 0 or not any(x.strides)


def _as_scalar(x):
    # np.generic values keep their dtype, so the kernel sees the compute dtype.
    if x.__class__ is np.ndarray:
        return x.reshape(-1)[0] if x.size else x.dtype.type(0)
    return x


def _merged_views(arrays, out):
    """4-d views of `arrays` (scalars become stride-0 arrays) and `out`, dims merged."""
    strides = [list(a.strides) if a.__class__ is np.ndarray and a.ndim else [0] * out.ndim for a in arrays]
    strides.append(list(out.strides))
    shape, strides, extra = merged_layout(out.shape, strides)
    views = [np.lib.stride_tricks.as_strided(
        a if a.__class__ is np.ndarray else np.asarray(a), shape, st)
        for a, st in zip(list(arrays) + [out], strides)]
    return views, extra


def _run_strided(fn, views, extra_dims):
    if extra_dims <= 0:
        fn(*views)
        return
    # Rare: more than 4 unmergeable dims. Loop over the leading ones in Python.
    for idx in np.ndindex(*views[-1].shape[:extra_dims]):
        fn(*(v[idx] for v in views))


class BuiltinLoops:
    """The loops of built-in op `name` of arity `kind` ("unary", "binary", "ternary"):
    the variants of `kernels.loops.VARIANTS`, from the op's generated module."""

    __slots__ = ("module", "variants", "_loops")

    def __init__(self, kind, name):
        self.module = loops(kind, name)
        self.variants = frozenset(VARIANTS[kind])
        self._loops = {}

    def has(self, kinds):
        """Whether a loop over operands of `kinds` exists (else `run` takes the strided one)."""
        return kinds in self.variants

    def loop(self, kinds):
        """The compiled (serial, nogil) loop over operands of `kinds`."""
        loop = self._loops.get(kinds)
        if loop is None:
            loop = self._loops[kinds] = getattr(self.module, kinds)
        return loop


_builtins = {}


def builtin(kind, name):
    """The loops of built-in op `name` (a function of `_backends.scalar`), made once."""
    found = _builtins.get((kind, name))
    if found is None:
        found = _builtins[kind, name] = BuiltinLoops(kind, name)
    return found


def _flat_kinds(operands, out):
    """The operands' kinds for a flat loop ('c' same-shape contiguous array, 'v' scalar),
    or None when one needs the strided loop."""
    kinds = ""
    for x in operands:
        if x.__class__ is np.ndarray and x.shape == out.shape and x.flags.c_contiguous:
            kinds += "c"
        elif _is_scalar_operand(x):
            kinds += "v"
        else:
            return None
    return kinds


def run(f_loops, operands, out, into=None):
    """out[...] = f(*operands[...]) with the loops of scalar function f (a `builtin`, or a
    user function's): operands are arrays broadcast to out's shape, or scalars. `into`:
    the operand that is `out` itself, for loops with in-place variants (a fused program's:
    they write through that operand, see `kernels.loops`)."""
    if out.size == 0:
        return out
    parallel = threads.parallel(out.size, PARALLEL_THRESHOLD)
    if out.flags.c_contiguous:
        kinds = _flat_kinds(operands, out)
        if kinds is not None and into is not None:
            kinds = kinds[:into] + "o" + kinds[into + 1:]
        if kinds is not None and f_loops.has(kinds):
            args = [x.reshape(-1) if kind in "co" else _as_scalar(x) for x, kind in zip(operands, kinds)]
            if parallel:
                _split_flat(f_loops.loop(kinds), args, kinds, out.reshape(-1))
            else:
                f_loops.loop(kinds)(*args, out.reshape(-1))
            return out
    if out.flags.c_contiguous and _run_rows(f_loops, operands, out, into, parallel):
        return out
    views, extra = _merged_views(operands, out)
    kinds = "s" * len(operands)
    loop = f_loops.loop(kinds if into is None else kinds[:into] + "t" + kinds[into + 1:])
    _run_strided(_split_strided(loop) if parallel else loop, views, extra)
    return out


_ALL = slice(None)


def _row_buffer(x, outer, shape, kind):
    """The 1-d buffer a row loop reads operand `x` of `kind` from: from its first element
    to its last (`outer` strides over the outer dims of `shape`, then a row or one value)."""
    if x.__class__ is not np.ndarray:
        return np.asarray(x).reshape(1)
    if x.flags.c_contiguous:
        return x.reshape(-1)
    # A broadcast view of contiguous memory (the common case): index its stride-0 dims at
    # 0 and the rest is that memory, as a view (~1 us, where as_strided takes ~6).
    whole = x[tuple([0 if st == 0 else _ALL for st in x.strides])]
    if whole.__class__ is np.ndarray and whole.flags.c_contiguous:
        return whole.reshape(-1)
    span = 1 + (shape[3] - 1 if kind != "k" else 0)
    for n, st in zip(shape, outer):
        span += (n - 1) * st
    if span == 1:  # one value (a scalar broadcast to the output's shape)
        return np.asarray(x[(0,) * x.ndim]).reshape(1)
    return np.lib.stride_tricks.as_strided(x, (span,), (x.itemsize,))


def _element_strides(x, ndim):
    """`x`'s strides counted in elements (zeros for a scalar), or None when one is not a
    whole number of elements."""
    if x.__class__ is not np.ndarray or not x.ndim:
        return [0] * ndim
    size = x.itemsize
    strides = [st // size for st in x.strides]
    for st, element in zip(x.strides, strides):
        if st != element * size:
            return None
    return strides


_row_layouts = {}  # (shape, itemsize, (strides, itemsize) an operand) -> `row_layout`


def _find_row_layout(operands, out):
    """`row_layout` of the operands' element strides, or None."""
    strides = []
    for x in operands:
        st = _element_strides(x, out.ndim)
        if st is None:
            return None
        strides.append(st)
    strides.append([st // out.itemsize for st in out.strides])
    layout = row_layout(out.shape, strides)
    return None if layout is None else (tuple(layout[0]), layout[1], layout[2])


def _run_rows(f_loops, operands, out, into, parallel):
    """Run the row loop for broadcast operands of C-contiguous `out` (see `run`); False
    when their layout or the loops do not allow it."""
    # The layout depends on the shape, the strides and the item sizes alone: looked up
    # (~1 us) rather than found again (~7 us) on each call of a program's steady shapes.
    key = (out.shape, out.itemsize,
           *[(x.strides, x.itemsize) if x.__class__ is np.ndarray else None for x in operands])
    layout = _row_layouts.get(key, False)
    if layout is False:
        if len(_row_layouts) >= 512:
            _row_layouts.clear()
        layout = _row_layouts[key] = _find_row_layout(operands, out)
    if layout is None:
        return False
    shape, outer, kinds = layout
    if into is not None:
        kinds = kinds[:into] + "w" + kinds[into + 1:]
    if not f_loops.has(kinds):
        return False
    args = []
    for x, st, kind in zip(operands, outer, kinds):
        args += (_row_buffer(x, st, shape, kind), st)
    loop = f_loops.loop(kinds)
    flat = out.reshape(-1)
    if parallel:
        _split_rows(loop, args, kinds, flat, shape)
    else:
        loop(*args, flat, shape)
    return True


def _split_rows(loop, args, kinds, out, shape):
    """Run row `loop` over ranges of its first dim longer than 1, one range a thread
    (the dims before it are 1, so each range writes one contiguous part of `out`)."""
    dim = next(d for d, n in enumerate(shape) if n > 1)
    block = 1
    for n in shape[dim + 1:]:
        block *= n

    def part(lo, hi):
        part_shape = list(shape)
        part_shape[dim] = hi - lo
        part_args = []
        for x, st, kind in zip(args[::2], args[1::2], kinds):
            step = st[dim] if dim < 3 else 0 if kind == "k" else 1
            part_args += (x[lo * step:], st)
        loop(*part_args, out[lo * block:hi * block], tuple(part_shape))
    threads.split(part, shape[dim], threads.part_count(), align=64 if dim == 3 else 1)


def _split_flat(loop, args, kinds, out):
    """Run flat `loop` over ranges of the elements, one range a thread (`threads.split`)."""
    def part(lo, hi):
        loop(*[x[lo:hi] if kind in "co" else x for x, kind in zip(args, kinds)], out[lo:hi])
    threads.split(part, out.shape[0], threads.part_count())


def _split_strided(loop):
    """`loop` over 4-d views, run over ranges of one dim, one range a thread: the first
    dim with a range for every thread, else the longest."""
    def run_split(*views):
        shape = views[-1].shape
        count = threads.part_count()
        dim = next((d for d, n in enumerate(shape) if n >= count), None)
        if dim is None:
            dim = max(range(len(shape)), key=shape.__getitem__)
        lead = (slice(None),) * dim

        def part(lo, hi):
            loop(*(v[lead + (slice(lo, hi),)] for v in views))
        threads.split(part, shape[dim], count, align=1)
    return run_split


def unary(name, a, out):
    """out[...] = name(a[...]); `a` already broadcast to out's shape and compute dtype."""
    return run(builtin("unary", name), (a,), out)


def binary(name, a, b, out):
    """out[...] = name(a[...], b[...]); a, b are arrays broadcastable to out, or scalars."""
    return run(builtin("binary", name), (a, b), out)


# The fresh-output fast paths below run on every small op: they look their loop up in
# one dict per loop kind, keyed by the op's name (no `builtin(...).loop(...)` chain, no key
# tuple), allocate the 1-d output of a 1-d operand below the parallel threshold and call
# the loop with nothing else in between, and flatten only operands that are not already
# 1-d (ravel of a contiguous array is a view; reshape(-1) costs twice as much).
_fresh_cc, _fresh_cv, _fresh_vc, _fresh_c = {}, {}, {}, {}
_fresh_rows = {}  # (name, kinds) -> a binary op's row loop
_pair_layouts = {}  # (shape a, shape b) -> `pair_row_layout` (2.6 us to find, 0.1 to look up)


def _fresh_loop(table, kind, name, kinds):
    loop = table[name] = builtin(kind, name).loop(kinds)
    return loop


def _fresh_row_loop(name, kinds):
    loop = _fresh_rows[name, kinds] = builtin("binary", name).loop(kinds)
    return loop


def binary_fresh(name, a, b):
    """Fast path: a new array = name(a, b) for same-shape C-contiguous arrays, else None."""
    shape = a.shape
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        return None
    if shape != b.shape:
        return _broadcast_fresh(name, a, b)
    loop = _fresh_cc.get(name) or _fresh_loop(_fresh_cc, "binary", name, "cc")
    n = shape[0] if len(shape) == 1 else a.size
    out = np.empty(n, a.dtype)
    if n < PARALLEL_THRESHOLD or not threads.parallel(n, PARALLEL_THRESHOLD):
        if len(shape) == 1:
            loop(a, b, out)
            return out
        loop(a.ravel(), b.ravel(), out)
    else:
        _split_flat(loop, (a.ravel(), b.ravel()), "cc", out)
    return out.reshape(shape)


def _broadcast_fresh(name, a, b):
    """name(a, b) into a new array for C-contiguous operands that broadcast by the row
    loops (`run`'s layouts, found from the shapes alone: no broadcast views), else None."""
    key = (a.shape, b.shape)
    layout = _pair_layouts.get(key, False)
    if layout is False:
        if len(_pair_layouts) >= 512:  # a program meets few shapes; bound a varied one's
            _pair_layouts.clear()
        layout = _pair_layouts[key] = pair_row_layout(a.shape, b.shape)
    if layout is None:
        return None  # the op layer raises PyTorch's error, or runs the strided loop
    out_shape, shape, oa, ob, kinds = layout
    out = np.empty(out_shape, a.dtype)
    if out.size == 0:
        return out
    loop = _fresh_rows.get((name, kinds)) or _fresh_row_loop(name, kinds)
    args = [a.reshape(-1), oa, b.reshape(-1), ob]
    if out.size < PARALLEL_THRESHOLD or not threads.parallel(out.size, PARALLEL_THRESHOLD):
        loop(*args, out.reshape(-1), shape)
    else:
        _split_rows(loop, args, kinds, out.reshape(-1), shape)
    return out


def binary_scalar_fresh(name, a, scalar, tensor_first):
    """Fast path: name(a, scalar) (or name(scalar, a)) into a new array, or None."""
    if not a.flags.c_contiguous:
        return None
    shape = a.shape
    one_d = len(shape) == 1
    n = shape[0] if one_d else a.size
    out = np.empty(n, a.dtype)
    flat = a if one_d else a.ravel()
    serial = n < PARALLEL_THRESHOLD or not threads.parallel(n, PARALLEL_THRESHOLD)
    if tensor_first:
        loop = _fresh_cv.get(name) or _fresh_loop(_fresh_cv, "binary", name, "cv")
        if serial:
            loop(flat, scalar, out)
        else:
            _split_flat(loop, (flat, scalar), "cv", out)
    else:
        loop = _fresh_vc.get(name) or _fresh_loop(_fresh_vc, "binary", name, "vc")
        if serial:
            loop(scalar, flat, out)
        else:
            _split_flat(loop, (scalar, flat), "vc", out)
    return out if one_d else out.reshape(shape)


def unary_fresh(name, a):
    """Fast path: a new array = name(a) for a C-contiguous array, else None."""
    if not a.flags.c_contiguous:
        return None
    shape = a.shape
    loop = _fresh_c.get(name) or _fresh_loop(_fresh_c, "unary", name, "c")
    n = shape[0] if len(shape) == 1 else a.size
    out = np.empty(n, a.dtype)
    if n < PARALLEL_THRESHOLD or not threads.parallel(n, PARALLEL_THRESHOLD):
        if len(shape) == 1:
            loop(a, out)
            return out
        loop(a.ravel(), out)
    else:
        _split_flat(loop, (a.ravel(),), "c", out)
    return out.reshape(shape)


def ternary(name, a, b, c, out):
    """out[...] = name(a[...], b[...], c[...]) for operands broadcastable to out."""
    return run(builtin("ternary", name), (a, b, c), out)
