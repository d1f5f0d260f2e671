"""matmul (@) against NumPy: every rank case (vectors, matrices, batches that broadcast),
contiguous and transposed, an empty inner dim, float32 at BLAS precision, and every dtype
it takes (float16, bfloat16 and int64 too) over the layouts a kernel sees: transposed
views, a broadcast batch, vector-matrix forms.

The dtype table takes the device as a parameter: on the CPU against NumPy, on CUDA
against the CPU, computed on the device (`device_checks.same_on`). The cuBLAS calls a
GPU makes are test_cuda_blas.py's."""
import numpy as np
import pytest

import ember_tensor as E
from cuda_guard import DEVICES
from device_checks import same_on
from linalg_cases import assert_close, laid_out

RNG = np.random.default_rng(0)


MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((1, 5, 2, 3), (7, 1, 3, 4)),
    ((0, 3), (3, 2)), ((2, 0), (0, 3)),
]


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in MATMUL_SHAPES])
@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
def test_matmul_rank_cases_match_numpy(a_shape, b_shape, transposed):
    """Every rank case, contiguous or transposed in memory, and the @ operator: NumPy's product."""
    a, b = RNG.standard_normal(a_shape), RNG.standard_normal(b_shape)
    assert_close(E.matmul(laid_out(a, transposed), laid_out(b, transposed)), np.matmul(a, b))
    assert_close(laid_out(a) @ laid_out(b), np.matmul(a, b))


def test_matmul_float32_uses_blas_precision():
    """A float32 product stays float32, as precise as BLAS's."""
    a, b = RNG.standard_normal((64, 32)).astype(np.float32), RNG.standard_normal((32, 16)).astype(np.float32)
    result = E.tensor(a) @ E.tensor(b)
    assert result.dtype == E.float32
    np.testing.assert_allclose(result.numpy(), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (16, 16, 16), (7, 33, 5), (3, 0, 4), (0, 3, 4), (130, 70, 90)])
def test_two_d_products_equal_numpys_matmul_bit_for_bit(dtype, m, k, n):
    """A 2-d float product (mm, matmul, a 3-d @ 2-d one folded into a GEMM) runs BLAS by the
    shortest route: its result is NumPy matmul's, bit for bit, in every layout, and for
    A @ A.T (which BLAS may run as a symmetric rank-k update)."""
    a, b = RNG.standard_normal((m, k)).astype(dtype), RNG.standard_normal((k, n)).astype(dtype)
    for x, y in [(a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b)), (a, a.T)]:
        got = E.mm(E.from_numpy(x), E.from_numpy(y)).numpy()
        assert got.dtype == dtype and got.flags.c_contiguous
        np.testing.assert_array_equal(got, np.matmul(x, y))
    # (2, m, k) @ (k, n) is one GEMM of (2m, k) @ (k, n): NumPy's matmul of that.
    batch = RNG.standard_normal((2, m, k)).astype(dtype)
    np.testing.assert_array_equal((E.from_numpy(batch) @ E.from_numpy(b)).numpy(),
                                  np.matmul(batch.reshape(2 * m, k), b).reshape(2, m, n))


# (name, dtype, fn(a, b)) of a (3, 5) and a (5, 2) matrix of `dtype`: each dtype matmul
# takes, and the layouts that reach another kernel path (transposed views, broadcast
# batches, vector forms, an empty inner dim).
DTYPE_CASES = [
    ("mm", E.float32, lambda a, b: a @ b),
    ("mm_transposed", E.float32, lambda a, b: a.t().t() @ b.t().contiguous().t()),
    ("mv", E.float32, lambda a, b: a @ b[:, 0]),
    ("vm", E.float32, lambda a, b: a[0] @ b),
    ("dot", E.float32, lambda a, b: a[0] @ a[1]),
    ("batched_broadcast", E.float32, lambda a, b: a.expand(2, 3, 5) @ b),
    ("int64", E.int64, lambda a, b: a @ b),
    ("float64", E.float64, lambda a, b: a @ b),
    ("float16", E.float16, lambda a, b: a @ b),
    ("bfloat16", E.bfloat16, lambda a, b: a @ b),
    ("bfloat16_batched_transposed", E.bfloat16, lambda a, b: a.expand(2, 3, 5) @ b.t().t()),
    ("float16_k_zero", E.float16, lambda a, b: a[:, :0] @ b[:0]),
    ("k_zero", E.float32, lambda a, b: a[:, :0] @ b[:0]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,dtype,fn", DTYPE_CASES, ids=[n for n, _, _ in DTYPE_CASES])
def test_matmul_of_every_dtype_and_layout(name, dtype, fn, device):
    """Each dtype's product (in each layout) keeps its dtype and equals the float64 or
    int64 product rounded to it (on CUDA: the CPU's, computed on the device)."""
    a = E.tensor(np.arange(15, dtype=np.float32).reshape(3, 5) / 4 - 1).to(dtype)
    b = E.tensor(np.arange(10, dtype=np.float32).reshape(5, 2) / 3 - 1).to(dtype)
    same_on(device, fn, a, b, tol=1e-5)


def _batch_shapes():
    """Pairs of batch shapes that broadcast: each dim equal, or 1 on one side, or missing."""
    from hypothesis import strategies as st
    dim = st.integers(1, 3)
    return st.lists(st.tuples(dim, st.sampled_from(["same", "left1", "right1"])), max_size=3).map(
        lambda dims: (tuple(1 if how == "left1" else n for n, how in dims),
                      tuple(1 if how == "right1" else n for n, how in dims)))


def test_matmul_batch_broadcasting_matches_numpy_hypothesis():
    """Batch dims that broadcast (equal, 1 on either side, missing) and vector operands: NumPy's product."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    @hypothesis.settings(max_examples=40, deadline=None, derandomize=True)
    @hypothesis.given(_batch_shapes(), st.integers(0, 2), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
                      st.integers(0, 2))
    def check(batches, drop, n, k, m, vector):
        left_batch, right_batch = batches
        right_batch = right_batch[drop:] if drop <= len(right_batch) else ()
        a_shape = (k,) if vector == 1 else left_batch + (n, k)
        b_shape = (k,) if vector == 2 else right_batch + (k, m)
        a, b = RNG.standard_normal(a_shape), RNG.standard_normal(b_shape)
        assert_close(E.tensor(a) @ E.tensor(b), np.matmul(a, b))

    check()


@pytest.mark.parametrize("fn", ["outer", "ger"])
def test_outer_refuses_operands_that_are_not_vectors(fn):
    a, m = E.randn(3), E.randn(3, 3)
    assert getattr(E, fn)(a, a).shape == (3, 3)
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        getattr(E, fn)(m, a)
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument vec2, but got 0-D"):
        getattr(m[0], fn)(E.tensor(2.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("a_shape, b_shape", [((16, 4, 64, 32), (16, 4, 32, 64)), ((3, 128, 64), (3, 64, 128)),
                                              ((5, 80, 96), (5, 96, 80))])
def test_batched_products_split_over_threads_equal_numpys_bit_for_bit(dtype, a_shape, b_shape):
    # From enough multiply-adds a batch of matrices runs on two threads (runs of matrices,
    # the BLAS at one thread each): the GEMM calls of NumPy's loop at one thread, so the
    # bits of a one-thread run (a BLAS on two threads may block a larger product otherwise);
    # a 4-d stack whose two batch dims do not flatten to a view takes NumPy's loop (a 3-d
    # stack's one batch dim always splits).
    from ember_tensor._backends.cpu import matmul as cpu_matmul
    from ember_tensor._backends.cpu import threads as cpu_threads

    a, b = RNG.standard_normal(a_shape).astype(dtype), RNG.standard_normal(b_shape).astype(dtype)
    before = E.get_num_threads()
    calls = []
    real = cpu_threads.run_parts
    cpu_threads.run_parts = lambda task, parts: calls.append(parts) or real(task, parts)
    try:
        E.set_num_threads(2)
        got = (E.tensor(a) @ E.tensor(b)).numpy()
        swapped = E.tensor(np.ascontiguousarray(np.swapaxes(a, 0, -2))).transpose(0, -2)
        got_swapped = (swapped @ E.tensor(b)).numpy()
        E.set_num_threads(1)
        serial = (E.tensor(a) @ E.tensor(b)).numpy()
    finally:
        cpu_threads.run_parts = real
        E.set_num_threads(before)
    assert calls == ([2] if len(a_shape) == 4 else [2, 2])  # never at one thread
    np.testing.assert_array_equal(got, serial)
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-4)
    np.testing.assert_allclose(got_swapped, serial, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-4)
    assert cpu_matmul._batched_over_threads(a[:1], b[:1]) is None  # one matrix: nothing to split
