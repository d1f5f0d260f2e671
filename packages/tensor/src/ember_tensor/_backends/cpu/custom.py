"""The custom family on the CPU: ember.kernel's, raw_kernel's and reduce_kernel's loops.

`launch_elementwise` runs loops around a user's scalar function (Numba njit), built per
arity and layout; `launch_raw` runs a user's hand-written loop (njit, parallel);
`launch_reduce` runs a combine function over the rows of a matrix (parallel over rows).
Compiled loops are kept per user function (weakly: a redefined kernel drops its loops).

A user kernel is a closure over the user's function, so Numba cannot cache it on disk:
it compiles in memory (`_backends.codegen.compile_function`) once per process, per
(arity, operand pattern, dtypes), on first use, from the same loop generator as the
built-in ops (`kernels.loops.loop_source`). The layouts are ember's (see
ember_tensor._backends.cpu.elementwise): contiguous operands run one flat loop (array or
scalar per operand), broadcast rows run a row loop, anything else runs one 4-d strided
loop after merging dimensions;
large tensors run the same loop over ranges on several threads.
"""
import warnings
import weakref

from numba import njit, prange
from numba.core.errors import NumbaPerformanceWarning

from .. import codegen
from . import elementwise as _backend
from . import fused_layer_norm as _fused_layer_norm
from . import fused_reduction as _fused_reduction
from . import fused_softmax as _fused_softmax
from .kernels.fused import fused_module, row_loop_kinds
from .kernels.fused_layer_norm import fused_layer_norm_module
from .kernels.fused_reduction import fused_reduction_module
from .kernels.fused_softmax import fused_softmax_module
from .kernels.loops import loop_source

__all__ = ["launch_elementwise", "launch_fused", "launch_fused_layer_norm", "launch_fused_reduce",
           "launch_fused_softmax", "launch_raw", "launch_reduce"]

# user function -> its compiled loops (CpuLoops, a raw njit loop, a reduce loop)
_elementwise = weakref.WeakKeyDictionary()
_raw = weakref.WeakKeyDictionary()
_reduce = weakref.WeakKeyDictionary()


class CpuLoops:
    """The compiled CPU loops of one user function (each variant compiled on first use,
    in memory): what `elementwise.builtin` is for a built-in op, so that
    `elementwise.run` executes both."""

    def __init__(self, fn):
        self.fn = fn
        self._device_fn = njit(inline="always", error_model="numpy")(fn)
        self._loops = {}

    def loop(self, kinds):
        """The loop over operands of `kinds` (built-in ops' letters: c, v, s, r, k), compiled once
        (serial and nogil: `elementwise.run` splits large ones over threads)."""
        loop = self._loops.get(kinds)
        if loop is None:
            source = loop_source("loop", kinds)  # the generator of the built-in ops' loops
            loop = codegen.compile_function(source, "loop", {"f": self._device_fn},
                                            f"<ember kernel {self.fn.__name__}>")
            loop = self._loops[kinds] = njit(nogil=True, error_model="numpy")(loop)
        return loop

    def has(self, kinds):
        """Every layout has its loop: a user function's compile on demand."""
        return True


def launch_elementwise(fn, operands, out):
    """``out[...] = fn(*operands[...])`` (ember.kernel): operands are arrays broadcast to
    `out`'s shape, or NumPy scalars; `fn` compiles on first use, per layout."""
    loops = _elementwise.get(fn)
    if loops is None:
        loops = _elementwise[fn] = CpuLoops(fn)
    return _backend.run(loops, operands, out)  # the built-in ops' executor


class FusedLoops:
    """The loops of a fused program's generated module (`kernels.fused`): the contiguous,
    the strided and the row variant, so that `elementwise.run` executes it as a built-in op."""

    __slots__ = ("module", "flat", "rows", "_loops")

    def __init__(self, module, arity):
        self.module = module
        self.flat = "c" * arity
        self.rows = frozenset(row_loop_kinds(arity))
        self._loops = {}

    def has(self, kinds):
        """Only the all-contiguous flat loop, the row loops (`kernels.fused.row_loop_kinds`)
        and the in-place twins of the flat and the all-row loop exist (else `run` takes
        the strided one)."""
        if kinds == self.flat or kinds in self.rows:
            return True
        arity = len(self.flat)
        return len(kinds) == arity and ((kinds.count("o") == 1 and kinds.count("c") == arity - 1)
                                        or (kinds.count("w") == 1 and kinds.count("r") == arity - 1))

    def loop(self, kinds):
        """The compiled (serial, nogil) loop over operands of `kinds`."""
        loop = self._loops.get(kinds)
        if loop is None:
            loop = self._loops[kinds] = getattr(self.module, kinds)
        return loop


_fused = {}   # module name -> FusedLoops


def launch_fused(module_name, scalar_source, name, used, np_dtype, operands, out, into=None):
    """``out[...] = name(*operands[...])`` for a fused program (``ember_tensor.fusion``):
    `scalar_source` defines `name` over the scalar functions `used`; operands are arrays
    broadcast to `out`'s shape. Its module is generated and cached on disk on first use.
    `into`: the operand that is `out` itself (same memory, shape and strides), written
    through by the in-place loops."""
    loops = _fused.get(module_name)
    if loops is None:
        module = fused_module(module_name, scalar_source, name, used, np_dtype, len(operands))
        loops = _fused[module_name] = FusedLoops(module, len(operands))
    return _backend.run(loops, operands, out, into)


_fused_reductions = {}   # module name -> its loaded module


def launch_fused_reduce(module_name, scalar_source, name, used, np_dtype, kind, operands, dims, out, epilogue=None):
    """``out`` = reduction `kind` ("sum", "mean", "amax", "amin") over `dims` of
    ``name(*operands)``, computed per element inside the reduction loop (a fused reduction
    of ``ember_tensor.fusion``): operands are non-empty arrays of one (broadcast) shape,
    `out` the flat contiguous array of the kept dims. `epilogue`: None, or ``(source,
    name, used)`` of a one-input program applied to each reduced value (rounded to the
    dtype) before it is stored. Its module is generated and cached on disk on first use."""
    module = _fused_reductions.get(module_name)
    if module is None:
        module = _fused_reductions[module_name] = fused_reduction_module(
            module_name, scalar_source, name, used, np_dtype, len(operands), kind, epilogue)
    return _fused_reduction.run(module, kind, operands, dims, out)


_fused_softmaxes = {}   # module name -> its loaded module


def launch_fused_softmax(module_name, scalar_source, name, used, np_dtype, log, operands, axis, out):
    """``out`` = softmax (`log`: log_softmax) along `axis` of ``name(*operands)``, the
    program's values computed a block of rows at a time for eager's row kernel (a fused
    softmax of ``ember_tensor.fusion``): operands are non-empty arrays of one (broadcast)
    shape whose dims after `axis` have size 1, `out` the C-contiguous (rows, size) result.
    Its module is generated and cached on disk on first use."""
    module = _fused_softmaxes.get(module_name)
    if module is None:
        module = _fused_softmaxes[module_name] = fused_softmax_module(
            module_name, scalar_source, name, used, np_dtype, len(operands), log)
    return _fused_softmax.run(module, operands, axis, out)


_fused_layer_norms = {}   # module name -> its loaded module


def launch_fused_layer_norm(module_name, scalar_source, name, used, np_dtype, operands, k, weight, bias, eps, out):
    """``out`` = layer norm over the trailing `k` dims of ``name(*operands)`` with `weight`
    and `bias` (arrays of those dims, or None), the program's values computed a block of
    rows at a time for eager's row kernel (a fused layer norm of ``ember_tensor.fusion``):
    operands are non-empty arrays of one (broadcast) shape, `out` the C-contiguous (rows,
    size) result. Its module is generated and cached on disk on first use."""
    module = _fused_layer_norms.get(module_name)
    if module is None:
        module = _fused_layer_norms[module_name] = fused_layer_norm_module(
            module_name, scalar_source, name, used, np_dtype, len(operands))
    return _fused_layer_norm.run(module, operands, k, weight, bias, eps, out)


def launch_raw(cpu_loop, cuda_kernel, name, out, args):
    """Run raw_kernel's ``cpu_loop(out, *args)`` (compiled with ``njit(parallel=True)`` on
    first use); `cuda_kernel` is the CUDA backend's."""
    if cpu_loop is None:
        raise RuntimeError(f"{name}(): this kernel has no CPU version (pass cpu= to raw_kernel)")
    loop = _raw.get(cpu_loop)
    if loop is None:
        loop = _raw[cpu_loop] = njit(parallel=True, error_model="numpy")(cpu_loop)
    with warnings.catch_warnings():
        # A loop written with range, not prange, is fine: it runs serially.
        warnings.simplefilter("ignore", NumbaPerformanceWarning)
        loop(out, *args)
    return out


def _reduce_loop(combine):
    f = njit(inline="always", error_model="numpy")(combine)

    @njit(nogil=True, parallel=True, error_model="numpy")
    def loop(x, out, identity):
        for o in prange(x.shape[0]):
            acc = identity
            for i in range(x.shape[1]):
                acc = f(acc, x[o, i])
            out[o] = acc
    return loop


def launch_reduce(combine, matrix, out, identity):
    """``out[o] = combine(...combine(identity, matrix[o, 0])..., matrix[o, -1])`` for every
    row `o` of the C-contiguous 2-d `matrix` (reduce_kernel); `identity` a NumPy scalar."""
    loop = _reduce.get(combine)
    if loop is None:
        loop = _reduce[combine] = _reduce_loop(combine)
    loop(matrix, out, identity)
    return out
