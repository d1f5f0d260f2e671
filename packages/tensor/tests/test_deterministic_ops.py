"""Ops under ``use_deterministic_algorithms(True)``, as PyTorch 2.13 behaves.

On CUDA (Numba's simulator unless NUMBA_ENABLE_CUDASIM=0) the accumulating writes that
PyTorch makes deterministic (index_put_ and index_add_ with repeats, scatter_add,
scatter_reduce 'sum'/'mean') give the CPU's bits, and the ones it refuses (put_,
bincount with weights, histc of floats, scatter's products with a tensor source) raise
its RuntimeError naming its CUDA kernel, or warn with warn_only. put_ without
accumulation and max_unpool are refused on every device; N-d nll_loss and median/nanmedian
with indices on CUDA; the CPU messages are checked against PyTorch. (The backward passes
PyTorch refuses are ember-nn's `tests/test_deterministic_backward.py`.)
"""
import os
import sys
import warnings

import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()

import ember_tensor as et  # noqa: E402
from ember_tensor import nn_ops  # noqa: E402

cuda = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

# PyTorch's alertNotDeterministic texts (torch 2.13, aten/src/ATen/Context.cpp).
ERROR = ("{} does not have a deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'. "
         "You can turn off determinism just for this operation, or you can use the 'warn_only=True' option, if "
         "that's acceptable for your application. You can also file an issue at "
         "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
         "operation.")
WARNING = ("{} does not have a deterministic implementation, but you set "
           "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
           "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic support for this "
           "operation.")


@pytest.fixture(autouse=True)
def restore():
    yield
    et.use_deterministic_algorithms(False)


def _values(device, big=1e8):
    # Sums whose float value depends on the order of the additions (`big`: far past the
    # dtype's precision, within its range).
    index = et.tensor([0, 2, 0, 0, 2, 0, 1, 0], device=device)
    values = et.tensor([big, 0.5, 1.0, -big, 3.25, 0.1, 7.0, 0.3], device=device)
    return index, values


ACCUMULATING = [
    ("index_put_", lambda x, i, v: x.index_put_((i,), v, accumulate=True)),
    ("index_add_", lambda x, i, v: x.index_add_(0, i, v)),
    ("index_add_ alpha", lambda x, i, v: x.index_add_(0, i, v, alpha=2)),
    ("scatter_add_", lambda x, i, v: x.scatter_add_(0, i, v)),
    ("scatter_reduce_ sum", lambda x, i, v: x.scatter_reduce_(0, i, v, "sum")),
    ("scatter_reduce_ mean", lambda x, i, v: x.scatter_reduce_(0, i, v, "mean", include_self=False)),
    ("scatter_ add", lambda x, i, v: x.scatter_(0, i, v, reduce="add")),
    ("2-d index_put_", lambda x, i, v: x.reshape(1, 4).index_put_((None, i), v.reshape(1, 8), accumulate=True)),
]


@cuda
@pytest.mark.parametrize("call", [a[1] for a in ACCUMULATING], ids=[a[0] for a in ACCUMULATING])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_cuda_accumulation_is_the_cpus_in_deterministic_mode(call, dtype):
    et.use_deterministic_algorithms(True)
    results = {}
    for device in ("cpu", "cuda"):
        index, values = _values(device, 4096.0 if dtype == "float16" else 1e8)
        x = et.zeros(4, dtype=getattr(et, dtype), device=device)
        results[device] = call(x, index, values.to(getattr(et, dtype))).cpu()
    assert results["cuda"].tolist() == results["cpu"].tolist()  # bit for bit, in index order


@cuda
def test_cuda_integer_accumulation_is_allowed():
    et.use_deterministic_algorithms(True)
    x = et.zeros(3, dtype=et.int64, device="cuda")
    index = et.tensor([0, 0, 2], device="cuda")
    assert x.index_put_((index,), et.tensor([1, 2, 3], device="cuda"), accumulate=True).tolist() == [3, 0, 3]
    assert et.bincount(index).tolist() == [2, 0, 1]


REFUSED_ON_CUDA = [
    ("put_", lambda i, v: et.zeros(4, device="cuda").put_(i, v, accumulate=True)),
    ("_bincount_cuda", lambda i, v: et.bincount(i, v)),
    ("_histc_cuda with floating point input", lambda i, v: et.histc(v, bins=4)),
    ("scatter_reduce_cuda_prod_", lambda i, v: et.ones(4, device="cuda").scatter_reduce_(0, i, v, "prod")),
    ("scatter_reduce_cuda_kernel", lambda i, v: et.ones(4, device="cuda").scatter_(0, i, v, reduce="multiply")),
]


@cuda
@pytest.mark.parametrize("name, call", REFUSED_ON_CUDA, ids=[r[0] for r in REFUSED_ON_CUDA])
def test_cuda_ops_without_a_deterministic_form_raise_and_warn(name, call):
    index, values = _values("cuda", big=1.0)
    expected = call(index, values).cpu().tolist()  # the switch off: they run
    et.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError) as error:
        call(index, values)
    assert str(error.value) == ERROR.format(name)
    et.use_deterministic_algorithms(True, warn_only=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert call(index, values).cpu().tolist() == pytest.approx(expected)  # sums in any order
    assert [str(w.message) for w in caught] == [WARNING.format(name)]
    assert caught[0].category is UserWarning


@cuda
def test_cuda_ops_pytorch_keeps_allowed():
    et.use_deterministic_algorithms(True)
    index, values = _values("cuda")
    assert et.bincount(index).tolist() == [5, 1, 2]
    assert et.ones(4, device="cuda").scatter_reduce_(0, index, values, "amax").tolist()[1] == 7.0
    assert et.ones(4, device="cuda").scatter_(0, index, 2.0, reduce="multiply").tolist() == [32.0, 2.0, 4.0, 1.0]


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if et.cuda.is_available() else []))
def test_put_without_accumulation_is_refused_everywhere(device):
    et.use_deterministic_algorithms(True)
    index, values = _values(device)
    with pytest.raises(RuntimeError) as error:
        et.zeros(4, device=device).put_(index, values)
    assert str(error.value) == ERROR.format("put_")


def test_cpu_ops_match_pytorch_under_the_switch():
    torch = pytest.importorskip("torch")
    calls = [
        lambda lib: lib.zeros(3).put_(lib.tensor([0, 0]), lib.tensor([1.0, 2.0])),
        lambda lib: lib.zeros(3).put_(lib.tensor([0, 0]), lib.tensor([1.0, 2.0]), accumulate=True),
        lambda lib: lib.zeros(3).index_add_(0, lib.tensor([0, 0]), lib.tensor([1.0, 2.0])),
        lambda lib: lib.zeros(3).scatter_reduce_(0, lib.tensor([0, 0]), lib.tensor([1.0, 2.0]), "prod"),
        lambda lib: lib.bincount(lib.tensor([0, 2]), lib.tensor([1.0, 2.0])),
        lambda lib: lib.histc(lib.tensor([0.5, 1.0]), bins=2),
    ]
    try:
        torch.use_deterministic_algorithms(True)
        et.use_deterministic_algorithms(True)
        for call in calls:
            try:
                expected = call(torch).tolist()
            except RuntimeError as error:
                with pytest.raises(RuntimeError) as ours:
                    call(et)
                assert str(ours.value) == str(error)
            else:
                assert call(et).tolist() == expected
    finally:
        torch.use_deterministic_algorithms(False)


def _unpool_args(device, nd):
    values = et.tensor([[[1.0, 2.0]]], device=device).reshape((1, 1) + (1,) * (nd - 1) + (2,))
    indices = et.zeros(values.shape, dtype=et.int64, device=device)  # a repeated index
    return values, indices, (3,) * nd


# The ops PyTorch refuses at the call (not in a backward), with the names its kernels give.
REFUSED_AT_THE_CALL = [
    ("nll_loss2d_forward_out_cuda_template", "cuda",
     lambda d: nn_ops.nll_loss(et.zeros(2, 3, 4, device=d), et.zeros(2, 4, dtype=et.int64, device=d))),
    ("nll_loss2d_forward_out_cuda_template", "cuda",
     lambda d: nn_ops.nll_loss(et.zeros(2, 3, 2, 2, device=d), et.zeros(2, 2, 2, dtype=et.int64, device=d),
                                  reduction="sum")),
    ("median CUDA with indices output", "cuda", lambda d: et.median(et.tensor([[3.0, 1.0, 3.0]], device=d), 1)),
    ("median CUDA with indices output", "cuda", lambda d: et.tensor([2.0, 2.0], device=d).median(0)),
    ("median CUDA with indices output", "cuda", lambda d: et.nanmedian(et.tensor([1.0, 1.0], device=d), 0)),
    ("max_unpooling2d_forward_out", "cpu", lambda d: nn_ops.max_unpool(*_unpool_args(d, 1))),
    ("max_unpooling2d_forward_out", "cpu", lambda d: nn_ops.max_unpool(*_unpool_args(d, 2))),
    ("max_unpooling3d_forward_out", "cpu", lambda d: nn_ops.max_unpool(*_unpool_args(d, 3))),
]
_REFUSED_IDS = [f"{name}-{i}" for i, (name, _, _) in enumerate(REFUSED_AT_THE_CALL)]


def _devices_refusing(where):
    """The devices on which PyTorch refuses: CUDA only, or every device ("cpu")."""
    cuda_devices = ["cuda"] if et.cuda.is_available() else []
    return cuda_devices if where == "cuda" else ["cpu"] + cuda_devices


@pytest.mark.parametrize("name, where, call", REFUSED_AT_THE_CALL, ids=_REFUSED_IDS)
def test_ops_refused_at_the_call_raise_and_warn(name, where, call):
    for device in _devices_refusing(where):
        expected = call(device)  # the switch off: they run
        et.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError) as error:
            call(device)
        assert str(error.value) == ERROR.format(name)
        et.use_deterministic_algorithms(True, warn_only=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = call(device)
        assert [str(w.message) for w in caught] == [WARNING.format(name)]
        first = result[0] if isinstance(result, tuple) else result
        assert first.cpu().tolist() == (expected[0] if isinstance(expected, tuple) else expected).cpu().tolist()
        et.use_deterministic_algorithms(False)


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if et.cuda.is_available() else []))
def test_ops_pytorch_allows_under_the_switch(device):
    et.use_deterministic_algorithms(True)
    x = et.tensor([[3.0, 1.0, 2.0]], device=device)
    target = et.tensor([0], device=device)
    assert et.median(x).item() == 2.0  # no indices
    assert et.nanmedian(x).item() == 2.0
    assert nn_ops.nll_loss(x, target).item() == -3.0  # (N, C): PyTorch's nll_loss, no atomics
    per_pixel = nn_ops.nll_loss(x.reshape(1, 3, 1), target.reshape(1, 1), reduction="none")
    assert per_pixel.cpu().tolist() == [[-3.0]]
    assert et.kthvalue(x, 2, 1).values.cpu().tolist() == [2.0]  # not on 2.13's list (see the README)
    assert et.cumsum(x, 1).cpu().tolist() == [[3.0, 4.0, 6.0]]  # likewise
    if device == "cpu":
        assert et.median(x, 1).indices.tolist() == [2]  # PyTorch's CPU median is deterministic


def test_cpu_refusals_match_pytorch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    pairs = [  # (PyTorch's call, ember's)
        (lambda: F.max_unpool1d(torch.ones(1, 1, 2), torch.zeros(1, 1, 2, dtype=torch.int64), 2),
         lambda: nn_ops.max_unpool(*_unpool_args("cpu", 1))),
        (lambda: F.max_unpool3d(torch.ones(1, 1, 1, 1, 2), torch.zeros(1, 1, 1, 1, 2, dtype=torch.int64), 2),
         lambda: nn_ops.max_unpool(*_unpool_args("cpu", 3))),
        (lambda: torch.median(torch.tensor([[2.0, 2.0]]), 1), lambda: et.median(et.tensor([[2.0, 2.0]]), 1)),
        (lambda: F.nll_loss(torch.zeros(2, 3, 4), torch.zeros(2, 4, dtype=torch.int64)),
         lambda: nn_ops.nll_loss(et.zeros(2, 3, 4), et.zeros(2, 4, dtype=et.int64))),
    ]
    try:
        torch.use_deterministic_algorithms(True)
        et.use_deterministic_algorithms(True)
        for theirs, ours in pairs:
            try:
                theirs()
            except RuntimeError as error:
                with pytest.raises(RuntimeError) as raised:
                    ours()
                assert str(raised.value) == str(error)
            else:
                ours()
    finally:
        torch.use_deterministic_algorithms(False)
