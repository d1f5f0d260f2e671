"""The family database's entry type, `FamilyOpInfo`, and what its entries share.

An elementwise `OpInfo` derives its samples from a domain and a promotion rule; the ops
of the other families (nn kernels, indexing, sort/scan, linalg, random, sparse) take
operands whose shapes depend on each other (a kernel for an input, indices into a dim),
so each entry writes its own sample generator and names its result dtypes by rule.
"""
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core import B, C64, C128, F32, F64, I32, I64, NP, Operand, SampleInput, _dtype_of_array, make_values, rng_for

__all__ = ["FamilyOpInfo", "XFailOn", "FAMILIES", "FAMILY_TOLERANCE", "floats", "ints", "well_conditioned",
           "as_tuple"]

# Every family the database covers; an entry names one of them.
FAMILIES = ("nn", "indexing", "sort_scan", "linalg", "random", "sparse")

# The reference computes in float64: float32 results differ by their own rounding and by
# the order of accumulation, which grows with the (tiny) reduction lengths used here.
FAMILY_TOLERANCE = {F32: (2e-5, 2e-5), F64: (1e-10, 1e-10), C64: (2e-5, 2e-5), C128: (1e-10, 1e-10)}

O, S = Operand, SampleInput  # short names: the sample generators build many of both


@dataclass(frozen=True)
class XFailOn:
    """An expected failure of an entry on `device` ("cpu" or "cuda") for `dtypes` (all if
    empty) and, when `samples` names some, for those samples only: an ember bug, named
    precisely by `reason`. The generic test runs the named samples as a parameter of
    their own marked xfail(strict=True) — it fails once the bug is fixed and the mark
    must go — and holds the entry's other samples to the reference as usual."""
    device: str
    reason: str
    dtypes: tuple = ()
    samples: tuple = ()

    def applies(self, device, dtype):
        """Whether this failure is expected on `device` for `dtype`."""
        return self.device == device and (not self.dtypes or dtype in self.dtypes)


@dataclass
class FamilyOpInfo:
    """What the generic family tests (tests/test_op_families.py) need to know about one op.

    name:    the op's name in test ids ("conv2d", "linalg.solve").
    family:  one of FAMILIES.
    fn:      fn(*tensors, **kwargs) -> a tensor or a tuple of them, through ember's public
             surface (`ember_tensor`, `ember_tensor.nn_ops`, `.linalg`, `.sparse`). A random
             op also takes `device=`.
    ref:     the NumPy reference, ref(*arrays, **kwargs) -> an array or a tuple of them;
             floating operands arrive as float64, complex ones as complex128, integer and
             bool ones as they are. The result's dtype is the sample dtype for a floating
             or complex output (a complex sample's real dtype for a real output: a norm,
             slogdet's logabsdet), int64 for an integer one and bool for a bool one
             (`result_dtypes`; int32 for an int32 one: LAPACK's pivots). None for random ops.
    dtypes:  the dtypes the samples are drawn in (float32/float64; int64 where the op
             takes integer data; complex64/complex128 where PyTorch has the op for complex
             numbers), so the suite compiles no kernels it does not already.
    sample_inputs_func: gen(op, dtype, rng) -> SampleInputs of Operands (NumPy values and
             a layout: at least one "transposed" or "stepped" operand) and kwargs; an empty
             or 0-d case unless `no_empty` says why the op has none.
    check:   random ops only: check(values, sample, dtype) asserts the properties of one
             draw given as a NumPy array (shape, range, loose moments); its dtype and
             device, and its reproducibility for a seed, are the generic test's.
    result_dtype: random ops only: rule sample dtype -> result dtype (default: the same).
    reads_scalars: on CUDA the op may read single elements back — a count that sizes its
             output (as PyTorch's masked_select and unique synchronise) or a flag that
             raises the CPU's error (an index out of range, a singular matrix) — never more.
    tol:     per-dtype (rtol, atol) overriding FAMILY_TOLERANCE.
    xfails:  XFailOn entries: ember bugs this entry exposes.

    >>> import ember_tensor as et
    >>> from ember_tensor.testing.opdb import FAMILY_OPS
    >>> op = FAMILY_OPS["flip"]
    >>> sample = op.sample_inputs(et.float32)[0]
    >>> got = op.fn(*sample.ember(), **sample.kwargs)
    >>> (want,) = op.reference(sample)
    >>> bool((got.numpy() == want).all()), got.dtype is op.result_dtypes(et.float32, (want,))[0]
    (True, True)
    """
    name: str
    family: str
    fn: Callable
    ref: Callable = None
    dtypes: tuple = (F32, F64)
    sample_inputs_func: Callable = None
    check: Callable = None
    result_dtype: Callable = None
    reads_scalars: bool = False
    no_empty: str = None
    tol: dict = field(default_factory=dict)
    xfails: tuple = ()

    def __post_init__(self):
        assert self.family in FAMILIES, f"{self.name}: unknown family {self.family!r}"
        assert (self.ref is None) == (self.family == "random"), f"{self.name}: a reference xor a property check"
        assert (self.check is None) != (self.family == "random"), f"{self.name}: random ops need a check"

    @property
    def is_random(self):
        """Whether the entry is checked by its properties (no reference)."""
        return self.family == "random"

    def sample_inputs(self, dtype):
        """The entry's samples for `dtype`, the same in every run (seeded by name and dtype)."""
        return list(self.sample_inputs_func(self, dtype, rng_for(self.name, dtype)))

    def tolerance(self, dtype):
        """(rtol, atol) for floating results of `dtype`."""
        return self.tol.get(dtype, FAMILY_TOLERANCE.get(dtype, (0, 0)))

    def reference(self, sample):
        """The reference result of `sample`: a tuple of arrays, one per output."""
        arrays = [_reference_operand(x) for x in sample.operands()]
        with np.errstate(all="ignore"):
            return as_tuple(self.ref(*arrays, **sample.kwargs))

    def result_dtypes(self, dtype, reference):
        """The ember dtype of each output: the sample dtype for floating reference outputs
        (its real dtype for a complex sample), its complex dtype for complex ones, int64 for
        integer ones, bool for bool ones."""
        def one(r):
            kind = np.asarray(r).dtype.kind
            if kind == "c":
                return dtype if dtype.is_complex else dtype.to_complex()
            if kind == "f":
                return dtype.to_real() if dtype.is_complex else dtype
            if np.asarray(r).dtype == np.int32:  # LAPACK's pivots
                return I32
            return B if kind == "b" else I64
        return tuple(one(r) for r in reference)

    def random_result_dtype(self, dtype):
        """The dtype a random op's draw has for sample dtype `dtype`."""
        return self.result_dtype(dtype) if self.result_dtype else dtype

    def xfails_on(self, device, dtype):
        """The XFailOn entries that apply on `device` for `dtype`."""
        return [x for x in self.xfails if x.applies(device, dtype)]


def _reference_operand(x):
    if not isinstance(x, Operand):  # None (no weight, no bias) or a Python number
        return x
    dtype = _dtype_of_array(x.value)
    if dtype.is_complex:
        return x.value.astype(np.complex128)
    return x.value.astype(np.float64) if dtype.is_floating_point else x.value


def as_tuple(result):
    """A result as a tuple of outputs (a tensor or array alone is one output)."""
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def floats(shape, dtype, rng, low=-2.0, high=2.0):
    """Values of a floating `dtype` (or int64 in [low, high]) drawn uniformly."""
    return make_values(shape, dtype, rng, low, high)


def ints(shape, high, rng, low=0):
    """int64 indices in [low, high)."""
    return rng.integers(low, high, shape).astype(np.int64)


def well_conditioned(shape, dtype, rng, spd=False):
    """Square matrices (batched by shape[:-2]) far from singular: a random matrix plus n
    on the diagonal (complex parts for a complex dtype); `spd` gives a Hermitian
    positive-definite one (M M^H + n I)."""
    n = shape[-1]
    m = rng.uniform(-1, 1, shape)
    if dtype.is_complex:
        m = m + 1j * rng.uniform(-1, 1, shape)
    if spd:
        m = m @ np.conj(np.swapaxes(m, -1, -2))
    return (m + n * np.eye(n)).astype(NP[dtype])

