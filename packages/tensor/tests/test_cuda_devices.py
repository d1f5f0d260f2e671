"""CUDA tensors compared with CPU tensors, and the torch.cuda API (ember_tensor.cuda).

Runs on Numba's CUDA simulator (conftest.py sets NUMBA_ENABLE_CUDASIM=1 unless it is
set already), which runs one Python thread per CUDA thread: shapes stay tiny. Tests
marked `gpu` need a real device (NUMBA_ENABLE_CUDASIM=0 on a GPU machine).
"""
import warnings

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import device_only, same_as_cpu as _same

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

CUDA0 = et.device("cuda", 0)
# Tests that use hooks only the simulator has (a settable memory capacity, its arrays).
simulator_only = pytest.mark.skipif(
    not et.cuda.is_available() or "simulator" not in et.cuda.get_device_name().lower(),
    reason="uses a hook of Numba's CUDA simulator")
A = [[0.5, -1.5, 2.0], [3.25, -0.0, 7.0]]
B = [1.0, 2.0, -3.0]
AI = [[1, -2, 3], [4, 5, -6]]
BI = [2, 3, 1]


def _check(fn, *args, tol=1e-6):
    """fn on CPU tensors and on the same tensors moved to CUDA agree."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*args)
        got = fn(*[a.cuda() if isinstance(a, et.Tensor) else a for a in args])
    _same(expected, got, tol)


def _inputs(dtype):
    """(a, b) of `dtype`: a 2x3 matrix and a broadcast row, as given by the layout cases."""
    if dtype.is_floating_point:
        return et.tensor(A, dtype=dtype), et.tensor(B, dtype=dtype)
    if dtype is et.bool:
        return et.tensor(A) > 0, et.tensor(B) > 0
    return et.tensor(AI).abs().to(dtype), et.tensor(BI, dtype=dtype)


# layout name -> (a, b) -> operands: contiguous, broadcast, transposed, strided, 0-d, scalar
LAYOUTS = {
    "contiguous": lambda a, b: (a, a.flip(1).contiguous()),
    "broadcast": lambda a, b: (a, b),
    "transposed": lambda a, b: (a.t(), a[:, :1].t()),
    "strided": lambda a, b: (a[:, ::2], b[::2]),
    "zero_dim": lambda a, b: (a[1, 2], b),
    "scalar": lambda a, b: (a, 2),
}

UNARY = {
    et.float32: ["neg", "abs", "exp", "log", "sqrt", "sin", "tanh", "sigmoid", "floor", "round",
                 "erf", "lgamma", "isnan", "reciprocal", "sign"],
    et.float64: ["exp", "log1p", "rsqrt", "atan", "trunc", "frac"],
    et.float16: ["exp", "neg", "ceil"],
    et.bfloat16: ["exp", "abs"],
    et.int64: ["neg", "abs", "bitwise_not", "square"],
    et.int32: ["neg", "sign"],
    et.uint8: ["bitwise_not"],
    et.bool: ["logical_not", "bitwise_not"],
}

BINARY = {
    et.float32: ["add", "sub", "mul", "div", "pow", "atan2", "maximum", "fmod", "remainder", "lt",
                 "eq", "hypot", "copysign", "floor_divide"],
    et.float64: ["add", "div", "minimum", "ge"],
    et.float16: ["add", "mul", "gt"],
    et.bfloat16: ["add", "sub"],
    et.int64: ["add", "mul", "floor_divide", "remainder", "bitwise_and", "bitwise_left_shift", "div"],
    et.int32: ["sub", "bitwise_xor", "ne"],
    et.int8: ["add"],
    et.uint8: ["mul", "bitwise_or"],
    et.bool: ["logical_and", "logical_xor", "add", "bitwise_and"],
}


@pytest.mark.parametrize("dtype,name", [(d, n) for d, names in UNARY.items() for n in names],
                         ids=str)
def test_unary_matches_cpu(dtype, name):
    a, _ = _inputs(dtype)
    fn = getattr(et, name)
    _check(fn, a)
    _check(fn, a.t())  # non-contiguous
    _check(fn, a[1, 1])  # 0-d


@pytest.mark.parametrize("dtype,name", [(d, n) for d, names in BINARY.items() for n in names],
                         ids=str)
def test_binary_matches_cpu(dtype, name):
    a, b = _inputs(dtype)
    fn = getattr(et, name)
    layouts = ("broadcast", "transposed") if dtype is not et.float32 else tuple(LAYOUTS)
    for layout in layouts:
        x, y = LAYOUTS[layout](a, b)
        _check(fn, x, y)


@pytest.mark.parametrize("case", [
    ("where", lambda a, b: et.where(a > 0, a, b)),
    ("lerp", lambda a, b: et.lerp(a, b, 0.25)),
    ("addcmul", lambda a, b: et.addcmul(a, a.t().t(), b, value=0.5)),
    ("clamp_tensors", lambda a, b: et.clamp(a, b, b + 1)),
    ("div_floor", lambda a, b: et.div(a, b, rounding_mode="floor")),
    ("mixed_dtypes", lambda a, b: a.long() + b.half()),
    ("in_place", lambda a, b: a.clone().add_(b, alpha=2).mul_(3)),
    ("in_place_strided", lambda a, b: a.clone().t().sub_(1)),
    ("setitem", lambda a, b: _setitem(a.clone(), (slice(None), 1), 9.0)),
    ("setitem_tensor", lambda a, b: _setitem(a.clone(), 0, b)),
    ("cast_chain", lambda a, b: (a.int(), a.half(), a.bool(), a.double(), a.bfloat16())),
    ("contiguous", lambda a, b: a.t().contiguous()),
    ("expand_clone", lambda a, b: b.expand(4, 3).clone()),
], ids=lambda c: c[0])
def test_compound_ops_match_cpu(case):
    a, b = _inputs(et.float32)
    _check(case[1], a, b)


def _setitem(t, index, value):
    t[index] = value
    return t


# --- reductions ----------------------------------------------------------------------------

R = np.array([[[1.5, -2.0, 3.0, 0.0], [4.0, 5.0, -6.5, 7.0], [8.0, 0.25, 9.0, -1.0]],
              [[2.0, 2.0, -3.0, 1.0], [0.0, 1.0, 1.0, 5.0], [-4.0, 6.0, 0.5, 3.0]]])

REDUCTIONS = [
    ("sum", lambda x: x.sum()),
    ("sum_dim", lambda x: x.sum(1)),
    ("sum_dims_keepdim", lambda x: x.sum((0, 2), keepdim=True)),
    ("sum_neg_dim", lambda x: x.sum(-1)),
    ("mean", lambda x: x.mean((1, 2))),
    ("prod", lambda x: x.prod(2)),
    ("amax", lambda x: x.amax((0, 1))),
    ("amin", lambda x: x.amin()),
    ("max_dim", lambda x: tuple(x.max(1))),
    ("min_dim_keepdim", lambda x: tuple(x.min(2, keepdim=True))),
    ("argmax", lambda x: x.argmax()),
    ("argmin_dim", lambda x: x.argmin(0)),
    ("var", lambda x: x.var(1)),
    ("std_correction", lambda x: x.std((0, 2), correction=0)),
    ("var_mean", lambda x: et.var_mean(x, 2)),
    ("norm", lambda x: x.norm()),
    ("norm_1_dim", lambda x: x.norm(1, dim=1)),
    ("logsumexp", lambda x: x.logsumexp(2)),
    ("all", lambda x: x.all(1)),
    ("any", lambda x: (x > 8).any()),
    ("count_nonzero", lambda x: x.count_nonzero(2)),
    ("median", lambda x: x.median()),
    ("median_dim", lambda x: tuple(x.median(1))),
    ("sum_int", lambda x: x.long().sum(2)),
    ("amax_int", lambda x: x.int().amax(1)),
    ("sum_bool", lambda x: (x > 0).sum()),
    ("sum_half", lambda x: x.half().sum(1)),
    ("mean_bf16", lambda x: x.bfloat16().mean()),
    ("sum_float64", lambda x: x.double().sum(0)),
]

# How the input is laid out: its values stay R, its memory layout changes.
REDUCTION_LAYOUTS = {
    "contiguous": lambda t: t,
    "permuted": lambda t: t.permute(2, 0, 1).contiguous().permute(1, 2, 0),
    "sliced": lambda t: et.cat([t, t], 2)[:, :, ::2],
}


# Every reduction on a contiguous input; a representative few on the other layouts too
# (the simulator is slow, and the layout handling is shared by all reductions).
_LAYOUT_SUBSET = ("sum_dims_keepdim", "max_dim", "var", "median_dim", "amax", "argmax", "mean")
REDUCTION_CASES = [(name, fn, "contiguous") for name, fn in REDUCTIONS] + [
    (name, fn, layout) for name, fn in REDUCTIONS if name in _LAYOUT_SUBSET
    for layout in REDUCTION_LAYOUTS if layout != "contiguous"]


@pytest.mark.parametrize("name,fn,layout", REDUCTION_CASES,
                         ids=[f"{n}-{layout}" for n, _, layout in REDUCTION_CASES])
def test_reductions_match_cpu(name, fn, layout):
    x = REDUCTION_LAYOUTS[layout](et.tensor(R, dtype=et.float32))
    _check(fn, x)


@pytest.mark.parametrize("name,fn", [
    ("sum_0d", lambda x: x.sum()),
    ("max_0d", lambda x: x.max()),
    ("argmax_0d", lambda x: x.argmax(0)),
    ("var_0d", lambda x: x.var(correction=0)),
    ("median_0d", lambda x: x.median()),
], ids=lambda v: v if isinstance(v, str) else "")
def test_reductions_of_0d_tensors(name, fn):
    _check(fn, et.tensor(2.5))


def test_reductions_with_nan_and_ties():
    x = et.tensor([[1.0, float("nan"), 3.0, float("nan")], [2.0, 5.0, 5.0, -1.0]])
    for fn in (lambda t: tuple(t.max(1)), lambda t: t.argmin(1), lambda t: tuple(t.median(1)),
               lambda t: t.amax(1), lambda t: t.sum(1), lambda t: t.argmax()):
        _check(fn, x)


def test_empty_reductions():
    x = et.zeros(0, 3)
    for fn in (lambda t: t.sum(0), lambda t: t.prod(0), lambda t: t.mean(0), lambda t: t.sum(1),
               lambda t: t.amax(1), lambda t: t.all(0)):
        _check(fn, x)


# --- matmul ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name,fn", [
    ("mm", lambda a, b: a @ b),
    ("mm_transposed", lambda a, b: a.t().t() @ b.t().contiguous().t()),
    ("mv", lambda a, b: a @ b[:, 0]),
    ("vm", lambda a, b: a[0] @ b),
    ("dot", lambda a, b: a[0] @ a[1]),
    ("batched_broadcast", lambda a, b: a.expand(2, 3, 5) @ b),
    ("int64", lambda a, b: a.long() @ b.long()),
    ("float64", lambda a, b: a.double() @ b.double()),
    ("float16", lambda a, b: a.half() @ b.half()),
    ("bfloat16", lambda a, b: a.bfloat16() @ b.bfloat16()),
    ("bfloat16_batched_transposed", lambda a, b: a.bfloat16().expand(2, 3, 5) @ b.bfloat16().t().t()),
    ("float16_k_zero", lambda a, b: a.half()[:, :0] @ b.half()[:0]),
    ("k_zero", lambda a, b: a[:, :0] @ b[:0]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_matmul_matches_cpu(name, fn):
    a = et.tensor(np.arange(15, dtype=np.float32).reshape(3, 5) / 4 - 1)
    b = et.tensor(np.arange(10, dtype=np.float32).reshape(5, 2) / 3 - 1)
    _check(fn, a, b, tol=1e-5)


# --- devices, copies, printing, errors -----------------------------------------------------

def test_tensors_land_on_the_current_numbered_device():
    # The notes' "CUDA semantics" snippet, with the one device the simulator has.
    cuda = et.device("cuda")
    cuda0 = et.device("cuda:0")
    x = et.tensor([1., 2.], device=cuda0)
    assert x.device == et.device(type="cuda", index=0)
    y = et.tensor([1., 2.]).cuda()
    assert y.device == CUDA0
    with et.cuda.device(0):
        a = et.tensor([1., 2.], device=cuda)
        b2 = et.tensor([1., 2.]).to(device=cuda)
        c = a + b2
        assert a.device == b2.device == c.device == CUDA0
    assert repr(et.ones(2, device="cuda")) == "tensor([1., 1.], device='cuda:0')"
    assert str(et.zeros(2, dtype=et.int64, device="cuda")) == "tensor([0, 0], device='cuda:0')"
    assert et.ones(2, device="cuda").type() == "torch.cuda.FloatTensor"
    assert et.ones(2, device="cuda").is_cuda and et.ones(2, device="cuda").get_device() == 0


def test_new_and_like_keep_device_and_dtype():
    x_gpu = et.empty(2, device=et.device("cuda"))
    y_gpu = x_gpu.new_full([3, 2], fill_value=-5)
    assert str(y_gpu) == ("tensor([[-5., -5.],\n        [-5., -5.],\n        [-5., -5.]], "
                          "device='cuda:0')")
    assert et.zeros_like(x_gpu).device == CUDA0
    assert et.ones_like(x_gpu.long()).dtype == et.int64
    assert x_gpu.new_tensor([1, 2]).device == CUDA0


def test_cross_device_ops_raise_pytorchs_error():
    with pytest.raises(RuntimeError, match=r"^Expected all tensors to be on the same device, but "
                       r"found at least two devices, cuda:0 and cpu!$"):
        et.ones(2, device="cuda") + et.ones(2)
    with pytest.raises(RuntimeError, match="cuda:0 and cpu"):
        et.ones(2, device="cuda") @ et.ones(2)


def test_copies_between_host_and_device():
    host = et.tensor([[1.5, 2.5], [3.5, 4.5]])
    dev = et.zeros(2, 2, dtype=et.float64, device="cuda")
    dev.copy_(host.t())  # cross-device, converting, from a non-contiguous source
    assert dev.tolist() == [[1.5, 3.5], [2.5, 4.5]]
    back = et.empty(2, 2, dtype=et.int32)
    back.copy_(dev)
    assert back.tolist() == [[1, 3], [2, 4]]
    assert dev.to("cpu", et.bfloat16).tolist() == [[1.5, 3.5], [2.5, 4.5]]
    assert host.cuda().cpu().tolist() == host.tolist()
    assert host.to(CUDA0, non_blocking=True).cpu().tolist() == host.tolist()
    assert dev[1, 0].item() == 2.5 and float(dev[0, 1]) == 3.5
    np.testing.assert_array_equal(np.asarray(dev), [[1.5, 3.5], [2.5, 4.5]])
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        dev.numpy()


def test_random_numbers_are_made_on_the_device_and_reproducible():
    # CUDA has its own Philox generator (as PyTorch): a seed fixes the numbers, but they
    # are not the CPU's. test_cuda_random.py checks every sampler in depth.
    et.manual_seed(7)
    with device_only():
        first = et.rand(4000, device="cuda")
        later = et.rand(4000, device="cuda")
    et.cuda.manual_seed(7)
    second = et.rand(4000, device="cuda")
    assert first.device == CUDA0
    assert first.tolist() == second.tolist()
    assert first.tolist() != later.tolist()  # each call advances the generator's offset
    values = first.cpu().numpy()
    assert values.min() >= 0 and values.max() < 1 and abs(values.mean() - 0.5) < 0.025
    et.cuda.manual_seed_all(3)
    x = et.empty(64, 64, device="cuda").normal_(0.0, 1.0).cpu().numpy()
    assert abs(x.mean()) < 0.1 and abs(x.std() - 1) < 0.1
    ints = et.randint(0, 10, (400,), device="cuda")
    assert ints.dtype == et.int64 and set(ints.cpu().tolist()) == set(range(10))


# --- torch.cuda API ----------------------------------------------------------------------------

def test_device_queries():
    assert et.cuda.is_available() and et.cuda.is_initialized()
    assert et.cuda.device_count() == 1
    assert et.cuda.current_device() == 0
    et.cuda.set_device(0)
    et.cuda.set_device("cuda:0")
    with et.cuda.device(0):
        assert et.cuda.current_device() == 0
    assert isinstance(et.cuda.get_device_name(), str) and et.cuda.get_device_name(0)
    props = et.cuda.get_device_properties(0)
    assert props.name == et.cuda.get_device_name() and props.major >= 1
    assert et.cuda.get_device_capability() == (props.major, props.minor)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        et.cuda.get_device_properties(3)
    et.cuda.synchronize()


def test_streams_and_events():
    s = et.cuda.Stream()
    assert et.cuda.current_stream() == et.cuda.default_stream()
    A = et.empty((10, 10), device=et.device("cuda")).normal_(0.0, 1.0)
    with et.cuda.stream(s):
        assert et.cuda.current_stream() == s
        s.wait_stream(et.cuda.default_stream())  # what the notes' snippet needs to be correct
        B = et.sum(A)
    assert et.cuda.current_stream() == et.cuda.default_stream()
    s.synchronize()
    assert abs(B.item() - A.cpu().sum().item()) < 1e-4
    start, end = et.cuda.Event(enable_timing=True), et.cuda.Event(enable_timing=True)
    start.record()
    (A @ A).sum()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0 and end.query()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        et.cuda.Event().elapsed_time(end)


def test_memory_stats_follow_tensors():
    et.cuda.reset_peak_memory_stats()
    before = et.cuda.memory_allocated()
    x = et.empty(1000, device="cuda")
    assert et.cuda.memory_allocated() >= before + 4000
    assert et.cuda.max_memory_allocated() >= et.cuda.memory_allocated()
    del x
    assert et.cuda.memory_allocated() == before
    assert et.cuda.max_memory_allocated() >= before + 4000
    et.cuda.reset_peak_memory_stats()
    assert et.cuda.max_memory_allocated() == before


@pytest.mark.gpu
def test_real_gpu_reports_a_real_name():
    assert "simulator" not in et.cuda.get_device_name().lower()
    assert et.cuda.get_device_properties().total_memory > 0


def test_caching_allocator_reuses_freed_blocks():
    et.cuda.empty_cache()
    base_alloc, base_reserved = et.cuda.memory_allocated(), et.cuda.memory_reserved()
    x = et.empty(1000, device="cuda")  # 4000 bytes, served as a 4096-byte block
    view = x[::2]
    del x
    assert et.cuda.memory_allocated() == base_alloc + 4096  # the view keeps the block
    del view
    assert et.cuda.memory_allocated() == base_alloc
    assert et.cuda.memory_reserved() == base_reserved + 4096  # cached, not given back
    assert et.cuda.memory_cached() == et.cuda.memory_reserved()
    hits = et.cuda.memory_stats()["cache_hits"]
    y = et.empty(1024, device="cuda")
    assert et.cuda.memory_stats()["cache_hits"] == hits + 1
    assert et.cuda.memory_reserved() == base_reserved + 4096
    assert et.cuda.max_memory_reserved() >= et.cuda.memory_reserved()
    del y
    et.cuda.empty_cache()
    assert et.cuda.memory_reserved() == et.cuda.memory_allocated()  # nothing cached any more
    assert "Allocated memory" in et.cuda.memory_summary()
    free, total = et.cuda.mem_get_info()
    assert 0 < free <= total


@simulator_only
def test_out_of_memory_error_says_what_was_asked_and_held(monkeypatch):
    from ember_tensor._backends.cuda import allocator as _cuda_alloc
    monkeypatch.setattr(_cuda_alloc, "SIM_CAPACITY", et.cuda.memory_reserved() + (1 << 20))
    keep = et.empty(1000, device="cuda")
    with pytest.raises(et.cuda.OutOfMemoryError,
                       match=r"^CUDA out of memory\. Tried to allocate 4\.00 MiB\. GPU 0 has a total "
                             r"capacity of .* Of the allocated memory .* is allocated by PyTorch"):
        et.empty(1 << 20, device="cuda")
    assert isinstance(et.cuda.OutOfMemoryError("x"), RuntimeError)
    assert et.cuda.memory_allocated() >= 4000  # `keep` is still held
    assert et.ones(2, device="cuda").sum().item() == 2.0  # and the device still works
    del keep


def test_pinned_memory_and_non_blocking_copies():
    x = et.arange(6.0).reshape(2, 3)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p[1].is_pinned() and p.device == et.device("cpu")
    assert p.pin_memory() is p
    assert p.tolist() == x.tolist()
    s = et.cuda.Stream()
    with et.cuda.stream(s):
        g = p.cuda(non_blocking=True)
        h = et.empty(2, 3, device="cuda").copy_(p, non_blocking=True)
    s.synchronize()
    assert g.tolist() == h.tolist() == x.tolist()
    assert p.to("cuda", non_blocking=True).device == CUDA0
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        g.pin_memory()
    assert not g.is_pinned()


def test_cuda_array_interface_describes_device_memory():
    x = et.arange(6.0, device="cuda").reshape(2, 3)
    cai = x.__cuda_array_interface__
    assert cai == {"shape": (2, 3), "strides": None, "typestr": "<f4",
                   "data": (x.data_ptr(), False), "version": 2}
    t = x.t().__cuda_array_interface__
    assert t["shape"] == (3, 2) and t["strides"] == (4, 12) and t["data"][0] == x.data_ptr()
    assert x[1].__cuda_array_interface__["data"][0] == x.data_ptr() + 12
    assert not hasattr(et.ones(2), "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="on non-CUDA tensor type: torch.FloatTensor"):
        et.ones(2).__cuda_array_interface__


def test_long_rows_are_split_across_blocks_and_merged():
    # Few long rows take the two-pass path (rows of at least 2 * SPLIT_MIN elements: 16
    # under the simulator, so the shapes stay small there).
    from ember_tensor._backends.cuda import reduction as _cuda_reduce
    n = 2 * _cuda_reduce.SPLIT_MIN + 4
    x = et.tensor(np.arange(3.0 * n).reshape(3, n) - 17)
    assert _cuda_reduce._chunks(1, 3 * n) > 1 and _cuda_reduce._chunks(3, n) > 1
    for fn in (lambda t: t.sum(), lambda t: t.mean(), lambda t: t.amin(), lambda t: t.sum(1),
               lambda t: t.t().mean(0), lambda t: t.norm(), lambda t: t.long().prod(1),
               lambda t: t.count_nonzero(), lambda t: (t > -17).all(), lambda t: t.abs().norm(1),
               lambda t: t.var(), lambda t: tuple(et.var_mean(t, 1, correction=0)),
               lambda t: t.t().std(0), lambda t: t.argmax(), lambda t: tuple(t.min(1)),
               lambda t: t.abs().argmin()):
        _check(fn, x)
    # ties and NaN across chunks: the first occurrence still wins
    ties = et.tensor([1.0, 9.0] * (n + 1))
    _check(lambda t: (t.argmax(), t.argmin()), ties)
    ties[25] = float("nan")
    ties[31] = float("nan")
    _check(lambda t: (t.argmax(), t.argmin(), t.max()), ties)


def test_slides_gpu_snippet():
    x = et.empty(5, 5).uniform_()
    c = x.cuda()  # the current GPU (0 by default)
    r = et.matmul(c, c)
    q = c ** 2 + r * c
    assert q.device == CUDA0 and repr(q).endswith("device='cuda:0')")
    expected = x ** 2 + et.matmul(x, x) * x
    np.testing.assert_allclose(q.cpu().numpy(), expected.numpy(), rtol=1e-5)
    with et.cuda.device(0):
        assert x.cuda().get_device() == 0
    assert (c * 2 + 1).get_device() == 0


@pytest.mark.skipif(et.cuda.device_count() > 1, reason="checks the error for a missing GPU")
def test_a_missing_gpu_is_an_invalid_device_ordinal():
    x = et.ones(2)
    for make in (lambda: x.cuda(1), lambda: et.zeros(2, device="cuda:1"), lambda: x.to("cuda:1")):
        with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
            make()
    with pytest.raises(RuntimeError, match="CUDA error: invalid device ordinal"):
        with et.cuda.device(1):
            pass


def test_the_gpu_allocator_is_a_valid_numba_emm_plugin():
    # The plugin needs the real numba.cuda (not the simulator), which imports without a GPU:
    # check in a fresh process that Numba accepts it (set_memory_manager validates it).
    import os
    import subprocess
    import sys
    code = ("from numba import cuda\n"
            "from ember_tensor._backends.cuda import allocator as _cuda_alloc\n"
            "cls = _cuda_alloc.CachingMemoryManager\n"
            "cuda.set_memory_manager(cls)\n"
            "assert issubclass(cls, cuda.HostOnlyCUDAMemoryManager)\n"
            "assert cls(context=None).interface_version == 1\n"
            "print('accepted')\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "accepted"


def test_long_median_rows_take_the_host_path():
    from ember_tensor._backends.cuda import reduction as _cuda_reduce
    n = _cuda_reduce.MEDIAN_ON_DEVICE_MAX + 5
    x = et.tensor(np.random.default_rng(0).permutation(2 * n).reshape(2, n).astype(np.float32))
    x[1, 3] = float("nan")
    for fn in (lambda t: t.median(), lambda t: tuple(t.median(1)), lambda t: tuple(t.t().median(0))):
        _check(fn, x)


def test_cached_blocks_are_reused_only_on_their_stream():
    et.cuda.empty_cache()
    side = et.cuda.Stream()
    with et.cuda.stream(side):
        x = et.empty(300, device="cuda")
    del x  # back to the side stream's cache
    hits = et.cuda.memory_stats()["cache_hits"]
    y = et.empty(300, device="cuda")  # default stream: must not take the side stream's block
    assert et.cuda.memory_stats()["cache_hits"] == hits
    with et.cuda.stream(side):
        z = et.empty(300, device="cuda")
    assert et.cuda.memory_stats()["cache_hits"] == hits + 1
    del y, z


@simulator_only
def test_without_the_allocator_plugin_allocations_are_still_counted(monkeypatch):
    # On a GPU where Numba's own allocator is in charge (EMBER_CUDA_ALLOCATOR=numba, or a
    # context made before ember's), ember counts its arrays: allocated == reserved.
    from ember_tensor._backends.cuda import arrays, runtime
    monkeypatch.setattr(arrays, "SIMULATOR", False)
    monkeypatch.setattr(runtime, "_emm_installed", False)
    before = (et.cuda.memory_allocated(), et.cuda.memory_reserved())
    arr = arrays.track(arrays._SimArray(np.empty(1000, np.float32)))
    assert et.cuda.memory_allocated() == before[0] + 4096
    assert et.cuda.memory_reserved() == before[1] + 4096
    del arr
    assert (et.cuda.memory_allocated(), et.cuda.memory_reserved()) == before


def test_is_bf16_supported():
    assert et.cuda.is_bf16_supported() is True
    assert et.cuda.is_bf16_supported(including_emulation=False) == (
        et.cuda.get_device_capability() >= (8, 0))
