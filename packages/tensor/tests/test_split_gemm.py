"""2-d products split over ember's threads (`_backends/cpu/gemm.py`): with a budget of 2 a
large product runs as blocks of rows (or, with few rows, of columns), each one
single-threaded BLAS call; the result must be a one-thread run's bits, for every layout
and both BLAS dtypes, through matmul, linear, an `out` buffer, the NumPy fallback (no
OpenBLAS to call) and the GEMMs of convolutions and LSTMs; errors stay PyTorch's."""
import numpy as np
import pytest

import ember_tensor as E
from ember_tensor._ops import nn as N
from ember_tensor._backends.cpu import gemm as cpu_gemm
from ember_tensor._backends.cpu import threads as cpu_threads

RNG = np.random.default_rng(0)


def _plain(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def _transposed(shape, dtype):  # a view whose rows are strided: the BLAS reads it transposed
    return np.ascontiguousarray(RNG.standard_normal(shape[::-1]).astype(dtype)).T


def _every_other(shape, dtype):  # no unit stride on either axis: NumPy's dot copies it first
    return RNG.standard_normal((2 * shape[0], 2 * shape[1])).astype(dtype)[::2, ::2]


# (m, k, n), a's layout, b's layout, how it splits: blocks of "rows", of "columns" (under
# 128 rows), or "none" (fewer than 16 rows, or a width that is not a multiple of 8:
# OpenBLAS's edge kernels would give other bits).
CASES = [
    ((256, 128, 384), _plain, _plain, "rows"),
    ((1024, 128, 128), _plain, _transposed, "rows"),      # linear's x @ W^T
    ((384, 1024, 128), _transposed, _plain, "rows"),      # a weight gradient, g^T @ x
    ((512, 64, 784), _transposed, _plain, "rows"),        # the MLP's weight gradient: wide, yet rows
    ((259, 258, 256), _transposed, _transposed, "rows"),  # odd rows: the last block is ragged
    ((259, 258, 257), _transposed, _transposed, "none"),  # width 257: not split
    ((400, 320, 96), _every_other, _plain, "rows"),
    ((64, 784, 512), _plain, _transposed, "columns"),     # the MLP's x @ W^T at batch 64
    ((64, 512, 784), _plain, _plain, "columns"),          # its input gradient g @ W
    ((16, 2048, 512), _transposed, _plain, "columns"),    # the fewest rows that split
    ((120, 1024, 264), _plain, _plain, "columns"),        # the second block's width is not a multiple of 64
    ((100, 300, 1000), _every_other, _transposed, "columns"),
    ((10, 2048, 512), _plain, _plain, "none"),            # few rows
    ((1000, 100, 100), _plain, _plain, "none"),           # width 100
]
IDS = [f"{m}x{k}x{n}-{fa.__name__[1:]}-{fb.__name__[1:]}" for (m, k, n), fa, fb, _ in CASES]


@pytest.fixture
def two_threads():
    before = E.get_num_threads()
    E.set_num_threads(2)
    yield
    E.set_num_threads(before)


@pytest.fixture
def count_splits(monkeypatch):
    calls = []
    real = cpu_threads.run_parts
    monkeypatch.setattr(cpu_threads, "run_parts", lambda task, parts: calls.append(parts) or real(task, parts))
    return calls


@pytest.fixture
def count_blocks(monkeypatch):
    axes = []
    real = cpu_gemm._blocks
    monkeypatch.setattr(cpu_gemm, "_blocks",
                        lambda a, b, out, parts, by_rows: axes.append("rows" if by_rows else "columns")
                        or real(a, b, out, parts, by_rows))
    return axes


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, layout_a, layout_b, split", CASES, ids=IDS)
def test_a_split_product_has_a_one_thread_runs_bits(two_threads, count_splits, count_blocks, dtype, shape, layout_a,
                                                      layout_b, split):
    m, k, n = shape
    a, b = layout_a((m, k), dtype), layout_b((k, n), dtype)
    serial = a.dot(b)  # the BLAS is at one thread: a one-thread run
    got = cpu_gemm.gemm(a, b)
    assert count_splits == ([] if split == "none" else [2])
    if cpu_threads.blas_gemm_address("s") is not None:  # blocks by pointer need OpenBLAS
        assert count_blocks == ([] if split == "none" else [split])
    assert got.shape == (m, n) and got.dtype == dtype and got.flags.c_contiguous
    np.testing.assert_array_equal(got, serial)
    into = np.full((m, n), np.nan, dtype)
    assert cpu_gemm.gemm(a, b, out=into) is into
    np.testing.assert_array_equal(into, serial)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("shape, layout_a, layout_b, split", [c for c in CASES if c[3] != "none"],
                         ids=[i for i, c in zip(IDS, CASES) if c[3] != "none"])
def test_without_openblas_numpys_dot_splits_rows_with_the_same_bits(two_threads, monkeypatch, count_splits, shape,
                                                                     layout_a, layout_b, split):
    # Another BLAS (no cblas_?gemm to call by address): NumPy's dot on blocks of rows.
    monkeypatch.setattr(cpu_gemm.blas, "gemm_function", lambda dtype: None)
    m, k, n = shape
    a, b = layout_a((m, k), np.float32), layout_b((k, n), np.float32)
    np.testing.assert_array_equal(cpu_gemm.gemm(a, b), a.dot(b))
    assert count_splits == [2]


@pytest.mark.parametrize("where", ["a", "b"])
def test_an_out_that_overlaps_an_operand_is_not_split(two_threads, count_splits, where):
    # Blocks written in place would overwrite operand values other blocks still read.
    storage = _plain((3 * 512 * 256,), np.float32)
    out = storage[:512 * 256].reshape(512, 256)  # C-contiguous: the split could write it
    if where == "a":
        a, b = storage[256 * 256:256 * 256 + 512 * 256].reshape(512, 256), _plain((256, 256), np.float32)
    else:
        a, b = _plain((512, 256), np.float32), storage[128 * 256:128 * 256 + 256 * 256].reshape(256, 256)
    expected = a.dot(b)
    assert cpu_gemm.gemm(a, b, out=out) is out
    assert count_splits == []
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_and_linear_split_and_keep_the_bits_of_one_thread(two_threads, count_splits, dtype):
    x, w, bias = _plain((512, 256), dtype), _plain((384, 256), dtype), _plain((384,), dtype)
    got_mm = (E.tensor(x) @ E.tensor(w).T).numpy()
    got_linear = N.linear(E.tensor(x[None]), E.tensor(w), E.tensor(bias)).numpy()
    assert count_splits, "a product of 50M multiply-adds at 2 threads must split"
    E.set_num_threads(1)
    count_splits.clear()
    serial_mm = (E.tensor(x) @ E.tensor(w).T).numpy()
    assert not count_splits  # one thread: never split
    np.testing.assert_array_equal(got_mm, serial_mm)
    serial_linear = N.linear(E.tensor(x[None]), E.tensor(w), E.tensor(bias)).numpy()
    assert got_linear.shape == (1, 512, 384)
    np.testing.assert_array_equal(got_linear, serial_linear)


def test_small_products_a_times_its_transpose_and_other_dtypes_stay_whole(two_threads, count_splits):
    small = _plain((64, 64), np.float32)
    np.testing.assert_array_equal(cpu_gemm.gemm(small, small), small.dot(small))
    a = _plain((512, 512), np.float64)
    np.testing.assert_array_equal(cpu_gemm.gemm(a, a.T), a.dot(a.T))  # one buffer: NumPy's SYRK, symmetric
    np.testing.assert_array_equal(cpu_gemm.gemm(a, a.T), cpu_gemm.gemm(a, a.T).T)
    ints = RNG.integers(-50, 50, (512, 256)), RNG.integers(-50, 50, (256, 256))  # no BLAS GEMM for integers
    np.testing.assert_array_equal(cpu_gemm.gemm(*ints), ints[0].dot(ints[1]))
    mixed = _plain((512, 256), np.float32), _plain((256, 256), np.float64)
    np.testing.assert_array_equal(cpu_gemm.gemm(*mixed), mixed[0].dot(mixed[1]))
    assert count_splits == []


@pytest.mark.parametrize("threads", [1, 2])
def test_shape_errors_are_pytorchs_whatever_the_budget(threads):
    before = E.get_num_threads()
    E.set_num_threads(threads)
    try:
        with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(512x512 and 256x512\)"):
            E.randn(512, 512) @ E.randn(256, 512)
        with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied"):
            N.linear(E.randn(512, 512), E.randn(256, 300))
    finally:
        E.set_num_threads(before)


def _conv_forward(conv, rnn, rng):
    x, w = rng.standard_normal((64, 64, 7, 7)), rng.standard_normal((128, 64, 3, 3))
    return conv.forward(x, w, (2, 2), (1, 1), (1, 1), 1)  # 4x4 outputs a sample: the whole-batch GEMM


def _conv_backward_weight(conv, rnn, rng):
    x, gy = rng.standard_normal((64, 64, 7, 7)), rng.standard_normal((64, 128, 4, 4))
    return conv.backward_weight(gy, x, (128, 64, 3, 3), (2, 2), (1, 1), (1, 1), 1)


def _conv_backward_input(conv, rnn, rng):
    w, gy = rng.standard_normal((128, 64, 3, 3)), rng.standard_normal((64, 128, 4, 4))
    return conv.backward_input(gy, w, (7, 7), (2, 2), (1, 1), (1, 1), 1)


def _lstm_forward(conv, rnn, rng):
    x = rng.standard_normal((8, 64, 256))
    w_ih, w_hh = rng.standard_normal((1024, 256)) * 0.1, rng.standard_normal((1024, 256)) * 0.1
    h0 = c0 = np.zeros((64, 256), x.dtype)
    return rnn.lstm_forward(x, w_ih, w_hh, None, None, h0, c0, False)[0]  # per step (64, 256) @ (256, 1024)


USERS = [_conv_forward, _conv_backward_weight, _conv_backward_input, _lstm_forward]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("user", USERS, ids=[u.__name__[1:] for u in USERS])
def test_backends_gemms_split_and_keep_the_bits_of_one_thread(count_splits, user, dtype):
    # The GEMMs inside convolutions (few outputs a sample) and recurrent layers go through
    # the split product too: at 2 threads they split, with the bits of a 1-thread run.
    from ember_tensor._backends.cpu import conv, rnn

    class Cast:  # the backends take arrays of one compute dtype
        def __init__(self, seed):
            self.rng = np.random.default_rng(seed)

        def standard_normal(self, shape):
            return self.rng.standard_normal(shape).astype(dtype)

    before = E.get_num_threads()
    try:
        E.set_num_threads(2)
        got = user(conv, rnn, Cast(1))
        assert count_splits and set(count_splits) == {2}
        E.set_num_threads(1)
        serial = user(conv, rnn, Cast(1))
    finally:
        E.set_num_threads(before)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, serial)
