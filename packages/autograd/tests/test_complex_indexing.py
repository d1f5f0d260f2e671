"""The indexing ops on complex64 and complex128 tensors against PyTorch, on every device:
values and the gradients of a real loss (PyTorch's conjugate Wirtinger convention).

A complex128 item is 16 bytes, wider than the widest word the element-moving kernels
take: the backends move it as two 8-byte words (`_backends.plan.WORDS`), and its sums
and products take paths of their own (NumPy's ufunc.at on the CPU, an in-order line
walk on CUDA, which has no complex atomics). Each op runs on a non-contiguous input and
with repeated indices where the op accumulates.

CUDA runs on Numba's simulator unless NUMBA_ENABLE_CUDASIM=0 is set.
"""
import os
import sys
import warnings

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import ember_autograd  # noqa: E402,F401 - installs the rules
import ember_tensor as et  # noqa: E402

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(27)


def _complex(*shape):
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


# Data shared by the programs: X is (4, 5) and enters transposed (a non-contiguous view of
# a (5, 4) buffer); S a source of X's shape; indices with repeats.
X = _complex(5, 4)
S = _complex(4, 5)
ROWS = np.array([3, 0, 3, 1])             # into dim 0 of X (repeats)
UNIQUE = np.array([2, 0, 3])              # into dim 0 of X (no repeats: copies are deterministic)
GATHER = np.array([[0, 4, 4], [1, 1, 0], [2, 3, 4], [0, 0, 0]])  # along dim 1 of X
PERMUTE = np.argsort(RNG.random((4, 5)), axis=0)  # along dim 0: every target once
MASK = RNG.random((4, 5)) < 0.5
FLAT = np.array([[19, 0], [7, 7], [-1, 3]])


def _idx(lib, a, device):
    t = lib.tensor(a)
    return t.to(device) if lib is et else t


# (lib, x, s, device) -> a complex tensor; x and s require grad.
PROGRAMS = {
    "gather": lambda lib, x, s, d: lib.gather(x, 1, _idx(lib, GATHER, d)),
    "index_select": lambda lib, x, s, d: lib.index_select(x, 0, _idx(lib, ROWS, d)),
    "take": lambda lib, x, s, d: lib.take(x, _idx(lib, FLAT, d)),
    "take_along_dim": lambda lib, x, s, d: lib.take_along_dim(x, _idx(lib, GATHER, d), 1),
    "getitem rows": lambda lib, x, s, d: x[_idx(lib, ROWS, d)],
    "getitem rows and columns": lambda lib, x, s, d: x[_idx(lib, ROWS, d), _idx(lib, GATHER[:, 0], d)],
    "getitem mask": lambda lib, x, s, d: x[_idx(lib, MASK, d)],
    "masked_select": lambda lib, x, s, d: lib.masked_select(x, _idx(lib, MASK[:1], d)),
    "flip": lambda lib, x, s, d: lib.flip(x, (0, 1)),
    "scatter": lambda lib, x, s, d: x.scatter(0, _idx(lib, PERMUTE, d), s),
    "scatter number": lambda lib, x, s, d: x.scatter(0, _idx(lib, PERMUTE[:2], d), 2.5 - 1j),
    "scatter_add": lambda lib, x, s, d: x.scatter_add(1, _idx(lib, GATHER, d), s[:, :3]),
    "scatter_reduce sum": lambda lib, x, s, d: x.scatter_reduce(1, _idx(lib, GATHER, d), s, "sum"),
    "scatter_reduce prod": lambda lib, x, s, d: x.scatter_reduce(1, _idx(lib, GATHER, d), s, "prod"),
    "scatter_reduce mean": lambda lib, x, s, d: x.scatter_reduce(1, _idx(lib, GATHER, d), s, "mean",
                                                                include_self=False),
    "index_add": lambda lib, x, s, d: x.index_add(0, _idx(lib, ROWS, d), s, alpha=2),
    "index_copy": lambda lib, x, s, d: x.index_copy(0, _idx(lib, UNIQUE, d), s[:3]),
    "index_fill": lambda lib, x, s, d: x.index_fill(1, _idx(lib, GATHER[0], d), 1 - 2j),
    "index_put": lambda lib, x, s, d: x.index_put((_idx(lib, UNIQUE, d),), s[0]),
    "index_put accumulate": lambda lib, x, s, d: x.index_put((_idx(lib, ROWS, d),), s[0], accumulate=True),
    "index_reduce prod": lambda lib, x, s, d: x.index_reduce(0, _idx(lib, ROWS, d), s, "prod"),
    "masked_fill": lambda lib, x, s, d: x.masked_fill(_idx(lib, MASK, d), 0.5j),
    "masked_scatter": lambda lib, x, s, d: x.masked_scatter(_idx(lib, MASK, d), s),
    "put": lambda lib, x, s, d: x.put(_idx(lib, UNIQUE, d), s[0, :3]),
    "put accumulate": lambda lib, x, s, d: x.put(_idx(lib, ROWS, d), s[0, :4], accumulate=True),
}


def _setitem(lib, x, s, d):
    y = x * 1
    y[_idx(lib, UNIQUE, d)] = s[:3]
    y[_idx(lib, MASK, d)] = 3j
    return y


PROGRAMS["setitem"] = _setitem

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not et.cuda.is_available(),
                                                                  reason="no CUDA and no simulator"))]


def _leaves(lib, dtype, device):
    x = lib.tensor(X).to(getattr(lib, dtype))
    s = lib.tensor(S).to(getattr(lib, dtype))
    if lib is et:
        x, s = x.to(device), s.to(device)
    return x.detach().requires_grad_(), s.detach().requires_grad_()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_complex_indexing_matches_pytorch(name, dtype, device):
    """Values, dtype and the gradients of a real loss, as PyTorch's."""
    program = PROGRAMS[name]
    ours, theirs = _leaves(et, dtype, device), _leaves(torch, dtype, "cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # index_reduce is in beta
        try:
            want = program(torch, theirs[0].mT, theirs[1], "cpu")
        except RuntimeError as error:
            # PyTorch differentiates no complex scatter_reduce/index_reduce: the same error
            # (ember's index_reduce names the scatter_reduce it runs), then the values
            # without gradients.
            with pytest.raises(RuntimeError, match=str(error).split(" does")[1].split(".")[0]):
                program(et, ours[0].mT, ours[1], device)
            ours, theirs = [t.detach() for t in ours], [t.detach() for t in theirs]
            want = program(torch, theirs[0].mT, theirs[1], "cpu")
        got = program(et, ours[0].mT, ours[1], device)
    assert str(got.dtype) == str(want.dtype) and got.device.type == device
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "complex64" else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), **tol)
    if not want.requires_grad:
        return
    weights = _complex(*want.shape)
    loss_ours = (got * et.tensor(weights).to(got.dtype).to(device)).real.sum()
    loss_theirs = (want * torch.tensor(weights).to(want.dtype)).real.sum()
    loss_theirs.backward()
    loss_ours.backward()
    for o, t in zip(ours, theirs):
        if t.grad is None:
            assert o.grad is None, name
            continue
        assert o.grad is not None and o.grad.device.type == device, name
        np.testing.assert_allclose(o.grad.cpu().numpy(), t.grad.numpy(), **tol)
