"""ember against PyTorch, op by op: every entry of ember's op database (elementwise ops,
reductions and the other families), on its samples and on edge samples (NaN, ±inf,
signed zeros, empty, 0-d, ties), in every dtype the entry lists — result dtype, shape and
values, the error where PyTorch raises, and in float64 and complex128 the gradients (of a
real loss: PyTorch's conjugate Wirtinger convention). A difference must be
listed, with its reason, in known_differences.txt; a listed pattern that no longer
matches anything fails too, so the file only shrinks as ember is fixed.

Runs in the `oracle` tox environment, the one place PyTorch (2.13, CPU) is installed:
PyTorch is never a dependency of an ember package.
"""
import fnmatch
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402 - after the check that PyTorch is there
from ember_tensor.testing.opdb import FAMILY_DB, OP_DB, REDUCTION_DB  # noqa: E402
from ember_tensor.testing.opdb.core import Operand, _dtype_of_array  # noqa: E402

from differential import (  # noqa: E402
    MACHINE_DEPENDENT, differences_of_call, known_differences, tensor_for, unexplained,
)

KNOWN = known_differences()
SEEN = set()  # the known patterns some difference matched in this run
EDGE = np.array([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-30, -2.5, 100.0, 0.5, -1.0])
FLOAT64 = "float64"
GRAD_DTYPES = (FLOAT64, "complex128")  # the dtypes whose samples are differentiated too


def _check(differences):
    for difference in differences:
        for pattern in KNOWN:
            if fnmatch.fnmatchcase(difference.key, pattern):
                SEEN.add(pattern)
    left = unexplained(differences, KNOWN)
    assert not left, "differences from PyTorch not in known_differences.txt:\n" + "\n".join(map(str, left))


def _lib_value(lib, x, grad):
    """An operand for `lib`: an Operand as that library's tensor (ember keeps its layout),
    an ember dtype as the library's dtype, anything else as it is."""
    if isinstance(x, Operand):
        name = _dtype_of_array(x.value).name
        if lib is ember:
            t = x.tensor(getattr(ember, name))
            return t.detach().requires_grad_(True) if grad and (t.dtype.is_floating_point or t.dtype.is_complex) else t
        return tensor_for(torch, x.value, name, grad and name.startswith(("float", "bfloat", "complex")))
    if isinstance(x, ember.dtype):
        return getattr(lib, x.name)
    if isinstance(x, (list, tuple)) and x and all(isinstance(v, Operand) for v in x):
        return type(x)(_lib_value(lib, v, grad) for v in x)
    return x


def _kwargs_for(lib, kwargs):
    return {k: _lib_value(lib, v, False) for k, v in kwargs.items()}


def _lookup(root, name):
    target = root
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def _root_of(name):
    """Where both libraries have `name`: the top level, else nn.functional (PyTorch's top
    level holds aten spellings with other signatures, as torch.embedding(weight, indices))."""
    for root in (lambda lib: lib, lambda lib: lib.nn.functional):
        if _lookup(root(ember), name) is not None and _lookup(root(torch), name) is not None:
            return root
    return None


def _resolve(lib, name):
    """The function called `name` in `lib`, from the namespace both libraries share."""
    root = _root_of(name)
    return None if root is None else _lookup(root(lib), name)


# --- elementwise ops ---------------------------------------------------------------------


def _sample_calls(op_name, sample, grad):
    """(call, make_args) for one sample of an op: the same function looked up in each lib."""
    def call(lib, *args):
        return _resolve(lib, op_name)(*args[:-1], **args[-1])

    def make_args(lib, wants_grad):
        return [*(_lib_value(lib, x, wants_grad and grad) for x in sample.operands()),
                _kwargs_for(lib, sample.kwargs)]
    return call, make_args


def _edge_samples(op):
    """Edge values for a floating unary or binary op: every edge value, and every pair."""
    if op.kind == "unary":
        yield "edge", (Operand(EDGE),), {}
        yield "empty", (Operand(np.zeros((0, 3))),), {}
        yield "0-d", (Operand(np.array(-0.5)),), {}
    elif op.kind == "binary":
        a, b = np.meshgrid(EDGE, EDGE)
        yield "edge-pairs", (Operand(a), Operand(b)), {}
        yield "empty", (Operand(np.zeros((0, 3))), Operand(np.zeros((1, 3)))), {}


@pytest.mark.parametrize("op", OP_DB, ids=lambda op: op.name)
def test_elementwise_op(op):
    """Every sample in every dtype; edge samples in float32/float64; float64 gradients."""
    differences = []
    for dtype in op.dtypes:
        for i, sample in enumerate(op.sample_inputs(dtype)):
            call, make_args = _sample_calls(op.name, sample, grad=dtype.name in GRAD_DTYPES)
            key = f"{op.name}/{dtype.name}/{sample.name or i}"
            differences += differences_of_call(key, call, make_args, grad=dtype.name in GRAD_DTYPES)
    for name in ("float32", "float64"):
        if getattr(ember, name) not in op.dtypes or op.kind not in ("unary", "binary"):
            continue
        for sample_name, operands, kwargs in _edge_samples(op):
            operands = tuple(Operand(o.value.astype(name)) for o in operands)
            sample = type("Edge", (), {"operands": lambda self, o=operands: o, "kwargs": kwargs})()
            call, make_args = _sample_calls(op.name, sample, grad=name == FLOAT64)
            differences += differences_of_call(f"{op.name}/{name}/{sample_name}", call, make_args,
                                               grad=name == FLOAT64)
    _check(differences)


# --- reductions ----------------------------------------------------------------------------


def _reduction_inputs(info, dtype):
    rng = np.random.default_rng(3)
    if dtype.is_complex:
        values = rng.uniform(*info.domain, (3, 4)) + 1j * rng.uniform(*info.domain, (3, 4))
        nan = values.copy()
        nan[1, 2] = complex(1.0, math.nan)
        return {"random": values, "nan": nan, "0-d": np.array(1.5 - 0.5j), "empty": np.zeros((0, 4), complex)}
    if dtype.is_floating_point:
        values = rng.uniform(*info.domain, (3, 4))
        ties = np.array([[1.0, 2.0, 2.0, 1.0], [3.0, 3.0, 3.0, 3.0], [0.5, 2.0, 0.5, 2.0]])
        nan = values.copy()
        nan[1, 2] = math.nan
        return {"random": values, "ties": ties, "nan": nan, "0-d": np.array(1.5), "empty": np.zeros((0, 4))}
    if dtype.name == "bool":
        return {"random": rng.random((3, 4)) < 0.5, "empty": np.zeros((0, 4), bool)}
    return {"random": rng.integers(-2, 3, (3, 4)), "ties": np.array([[1, 2, 2, 1], [3, 3, 3, 3], [0, 2, 0, 2]]),
            "0-d": np.array(2), "empty": np.zeros((0, 4), np.int64)}


def _dim_choices(info):
    return {"tuple": [None, 0, -1, (0, 1)], "int": [None, 0, -1], "required": [0, -1, (0, 1)],
            "none": [None]}[info.dims]


@pytest.mark.parametrize("info", REDUCTION_DB, ids=lambda info: info.name)
def test_reduction(info):
    """Each input (random, ties, NaN, 0-d, empty) over each dim choice, keepdim both ways,
    with each kwargs set; gradients in float64."""
    differences = []
    for dtype in info.dtypes:
        for input_name, values in _reduction_inputs(info, dtype).items():
            for dim in _dim_choices(info):
                if np.ndim(values) == 0 and dim not in (None, 0, -1):
                    continue
                for keepdim in ((False, True) if dim is not None and info.keepdim else (None,)):
                    for kwargs in info.kwargs:
                        if dtype.is_complex and kwargs.get("dtype") is not None and not kwargs["dtype"].is_complex:
                            continue  # a complex input cast to a real dtype= loses its imaginary part
                        grad = dtype.name in GRAD_DTYPES

                        def call(lib, x, dim=dim, keepdim=keepdim, kwargs=kwargs):
                            extra = {} if keepdim is None else {"keepdim": keepdim}
                            dims = {} if dim is None else {"dim": dim}
                            return getattr(lib, info.name)(x, **dims, **extra, **_kwargs_for(lib, kwargs))

                        def make_args(lib, wants_grad, values=values, dtype=dtype):
                            return [tensor_for(lib, values, dtype.name,
                                               wants_grad and (dtype.is_floating_point or dtype.is_complex))]
                        key = f"{info.name}/{dtype.name}/{input_name}-dim{dim}-keep{keepdim}-{sorted(kwargs)}"
                        differences += differences_of_call(key, call, make_args, grad=grad)
    _check(differences)


# --- the other families ----------------------------------------------------------------------

# Entries called by name in both libraries: the random ops draw other streams, and the
# sparse entries build their sparse operands inside their own functions.
_COMPARABLE = [op for op in FAMILY_DB if op.family not in ("random", "sparse")
               and _resolve(torch, op.name) is not None and _resolve(ember, op.name) is not None]
# Keyword arguments an entry's own function adds to every call (its samples rely on them).
_ENTRY_KWARGS = {"argsort": {"stable": True}}


@pytest.mark.parametrize("op", _COMPARABLE, ids=lambda op: op.name)
def test_family_op(op):
    """Every sample of an nn/indexing/sort-scan/linalg/sparse entry whose name PyTorch has
    (``torch.<name>``, ``torch.nn.functional.<name>``, ``torch.linalg.<name>``, ...)."""
    differences = []
    for dtype in op.dtypes:
        for i, sample in enumerate(op.sample_inputs(dtype)):
            sample.kwargs = {**_ENTRY_KWARGS.get(op.name, {}), **sample.kwargs}
            call, make_args = _sample_calls(op.name, sample, grad=dtype.name in GRAD_DTYPES)
            key = f"{op.name}/{dtype.name}/{sample.name or i}"
            tol = op.tolerance(dtype) if hasattr(op, "tolerance") else None
            differences += differences_of_call(key, call, make_args, tol=tol, grad=dtype.name in GRAD_DTYPES)
    _check(differences)


def test_the_known_differences_are_still_differences():
    """Runs last: every pattern of known_differences.txt matched something in this run
    (a fixed difference takes its line out with it)."""
    stale = sorted(p for p in set(KNOWN) - SEEN if not KNOWN[p].startswith(MACHINE_DEPENDENT))
    assert not stale, "known differences that no longer occur (remove them):\n" + "\n".join(stale)
