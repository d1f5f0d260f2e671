"""The machinery of the differential test: run one call in ember and in PyTorch and say
how they differ (result dtype, shape, values, error, gradient), and the file of known
differences the test holds them to.

A call is written once, as ``call(lib, *args)`` where ``lib`` is the module to take
functions from (ember or torch) and the tensor arguments are built for each library from
the same NumPy values.
"""
import fnmatch
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import ember
import torch

KNOWN_FILE = Path(__file__).with_name("known_differences.txt")

# Per result dtype: (rtol, atol). ember computes float16/bfloat16 in float32 and rounds
# once; PyTorch's CPU kernels do the same or round more often: a few ulps apart.
TOLERANCE = {"float16": (2e-3, 1e-3), "bfloat16": (2e-2, 1e-2), "float32": (2e-5, 1e-5), "float64": (1e-9, 1e-11)}


@dataclass(frozen=True)
class Difference:
    """Where ember and PyTorch differ: `key` ("op/dtype/sample/kind") and what was seen."""
    key: str
    detail: str

    def __str__(self):
        return f"{self.key}: {self.detail}"


# The reason of a difference PyTorch shows on some CPUs only (a line starting with "? ").
MACHINE_DEPENDENT = "on some CPUs only: "


def known_differences():
    """{pattern: reason} from known_differences.txt (fnmatch patterns over keys). A line
    starting with "? " is a difference PyTorch shows on some CPUs only (its result there
    depends on the kernels it picks): its reason starts with `MACHINE_DEPENDENT`, and
    the check for stale lines passes over it."""
    known = {}
    for line in KNOWN_FILE.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        optional = line.startswith("? ")
        pattern, _, reason = line[2 if optional else 0:].partition(" -- ")
        if optional and reason.strip():
            reason = MACHINE_DEPENDENT + reason
        if not reason.strip():
            raise ValueError(f"known_differences.txt: {pattern!r} says no reason")
        known[pattern.strip()] = reason.strip()
    return known


def unexplained(differences, known):
    """The differences no known pattern covers."""
    return [d for d in differences if not any(fnmatch.fnmatchcase(d.key, p) for p in known)]


# --- building the same arguments for both libraries --------------------------------------


def tensor_for(lib, value, dtype_name, requires_grad=False):
    """`value` (a NumPy array) as a tensor of `lib` with dtype `dtype_name`."""
    dtype = getattr(lib, dtype_name)
    array = np.asarray(value)
    if dtype_name == "bfloat16":  # NumPy has no bfloat16: through float32, rounded by the library
        made = lib.tensor(array.astype(np.float32)).to(dtype)
    else:
        made = lib.tensor(array).to(dtype)
    if requires_grad:
        made.requires_grad_(True)
    return made


def dtype_name(t):
    return str(t.dtype).rpartition(".")[2]


def _host(t):
    t = t.detach()
    if getattr(t, "is_sparse", False):
        t = t.to_dense()
    t = t.cpu()
    t = t.float() if dtype_name(t) == "bfloat16" else t
    # PyTorch's gradients may be ZeroTensors, which convert only when forced.
    return t.numpy(force=True) if isinstance(t, torch.Tensor) else t.numpy()


# --- comparing ---------------------------------------------------------------------------


def describe(x):
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return f"{dtype_name(x)}{list(x.shape)}"
    return type(x).__name__


def compare(got, want, tol=None):
    """None when ember's `got` is PyTorch's `want` (dtype, shape, values), else what differs."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"{describe(got)} where PyTorch gives {len(want)} results"
        for i, (g, w) in enumerate(zip(got, want)):
            problem = compare(g, w, tol)
            if problem:
                return f"result {i}: {problem}"
        return None
    if isinstance(want, torch.Tensor):
        if not isinstance(got, ember.Tensor):
            return f"a {type(got).__name__} where PyTorch gives a tensor"
        if dtype_name(got) != dtype_name(want):
            return f"dtype {dtype_name(got)}, PyTorch {dtype_name(want)}"
        if tuple(got.shape) != tuple(want.shape):
            return f"shape {list(got.shape)}, PyTorch {list(want.shape)}"
        g, w = _host(got), _host(want)
        if g.dtype.kind in "fc":
            rtol, atol = tol or TOLERANCE.get(dtype_name(want), (1e-6, 1e-6))
            bad = ~np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
            if bad.any():
                i = np.argwhere(bad)[0]
                return f"values differ at {tuple(int(j) for j in i)}: {g[tuple(i)]!r}, PyTorch {w[tuple(i)]!r}"
        elif not np.array_equal(g, w):
            i = np.argwhere(g != w)[0]
            return f"values differ at {tuple(int(j) for j in i)}: {g[tuple(i)]!r}, PyTorch {w[tuple(i)]!r}"
        return None
    if isinstance(want, float) and isinstance(got, (int, float)) and (math.isnan(want) and math.isnan(got)):
        return None
    if got != want and not (isinstance(want, float) and math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9)):
        return f"{got!r}, PyTorch {want!r}"
    return None


def outcome(call, lib, args):
    """("ok", result) or ("error", exception) of ``call(lib, *args)`` with warnings hushed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", call(lib, *args)
        except Exception as error:  # the outcome is what is compared
            return "error", error


def differences_of_call(key, call, make_args, tol=None, grad=False):
    """The differences of one call: forward (values or error type), then, when `grad` and
    PyTorch's result is floating or complex, the gradients of a weighted sum of the
    outputs (their real parts, weighted by complex numbers: a real loss) with respect to
    every floating or complex input (a second run whose inputs require grad; skipped
    where PyTorch refuses to differentiate)."""
    e_kind, e_value = outcome(call, ember, make_args(ember, False))
    t_kind, t_value = outcome(call, torch, make_args(torch, False))
    if t_kind == "error":
        if e_kind == "ok":
            return [Difference(f"{key}/error", f"PyTorch raises {type(t_value).__name__}: "
                                               f"{str(t_value).splitlines()[0][:150]}; ember returns "
                                               f"{describe(e_value)}")]
        if not _same_error_kind(e_value, t_value):
            return [Difference(f"{key}/error-type", f"ember raises {type(e_value).__name__}, PyTorch "
                                                    f"{type(t_value).__name__}: {str(t_value).splitlines()[0][:120]}")]
        return []
    if e_kind == "error":
        return [Difference(f"{key}/raises", f"ember raises {type(e_value).__name__}: "
                                            f"{str(e_value).splitlines()[0][:150]}; PyTorch returns {describe(t_value)}")]
    problem = compare(e_value, t_value, tol)
    if problem:
        return [Difference(f"{key}/forward", problem)]
    if not grad or not _outputs(t_value):
        return []
    e_args, t_args = make_args(ember, True), make_args(torch, True)
    t_kind, t_value = outcome(call, torch, t_args)
    if t_kind == "error":
        return []  # PyTorch does not differentiate this call
    e_kind, e_value = outcome(call, ember, e_args)
    if e_kind == "error":
        return [Difference(f"{key}/grad", f"with inputs that require grad ember raises {type(e_value).__name__}: "
                                          f"{str(e_value).splitlines()[0][:150]}")]
    return _gradient_differences(key, e_args, t_args, e_value, t_value, tol)


def _same_error_kind(ours, theirs):
    """PyTorch's TypeError/ValueError/IndexError/RuntimeError family: the same class, or
    NotImplementedError where PyTorch's is a RuntimeError (both mean 'not supported')."""
    if isinstance(ours, type(theirs)):
        return True
    return isinstance(theirs, RuntimeError) and isinstance(ours, (RuntimeError, NotImplementedError))


def _outputs(value):
    values = value if isinstance(value, (tuple, list)) else (value,)
    return [v for v in values if isinstance(v, (ember.Tensor, torch.Tensor))
            and (v.dtype.is_floating_point or v.dtype.is_complex)]


def _weights(lib, t, index):
    rng = np.random.default_rng(7 + index)
    weights = rng.uniform(0.5, 1.5, tuple(t.shape))
    if t.is_complex():
        weights = weights + 1j * rng.uniform(-1.0, 1.0, tuple(t.shape))
    return tensor_for(lib, weights, dtype_name(t))


def _loss_term(o, weights):
    """A real number from output `o`: its weighted sum, the real part for a complex `o`."""
    weighted = o * weights
    return (weighted.real if weighted.is_complex() else weighted).sum()


def _gradient_differences(key, e_args, t_args, e_value, t_value, tol):
    t_outs = [o for o in _outputs(t_value) if o.requires_grad]
    e_outs = _outputs(e_value)
    if not t_outs:
        return []
    e_outs = [o for o in e_outs if o.requires_grad]
    if len(e_outs) != len(t_outs):
        return [Difference(f"{key}/grad", f"{len(e_outs)} outputs require grad, PyTorch {len(t_outs)}")]
    t_inputs = [a for a in t_args if isinstance(a, torch.Tensor) and a.requires_grad]
    e_inputs = [a for a in e_args if isinstance(a, ember.Tensor) and a.requires_grad]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            t_loss = sum(_loss_term(o, _weights(torch, o, i)) for i, o in enumerate(t_outs))
            t_grads = torch.autograd.grad(t_loss, t_inputs, allow_unused=True)
        except Exception:  # PyTorch has no gradient here: nothing to compare
            return []
        try:
            e_loss = sum(_loss_term(o, _weights(ember, o, i)) for i, o in enumerate(e_outs))
            e_grads = ember.autograd.grad(e_loss, e_inputs, allow_unused=True)
        except Exception as error:
            return [Difference(f"{key}/grad", f"ember's backward raises {type(error).__name__}: "
                                              f"{str(error).splitlines()[0][:150]}")]
    for i, (g, w) in enumerate(zip(e_grads, t_grads)):
        if w is None or g is None:
            if (w is None) != (g is None):
                return [Difference(f"{key}/grad", f"input {i}: gradient {'None' if g is None else 'given'}, "
                                                  f"PyTorch {'None' if w is None else 'given'}")]
            continue
        problem = compare(g, w, tol)
        if problem:
            return [Difference(f"{key}/grad", f"input {i}: {problem}")]
    return []
