"""The recurrent layers' time loops on several threads (`_backends/cpu/rnn.py`): with a
budget of 2 a layer whose recurrent work is large enough runs its loop, forward and
backward, on two blocks of batch rows at once; every result (output, final states, gate
activations, every gradient) must be a one-thread run's bits. Shapes the split would
change the bits of (a hidden size not a multiple of 16, blocks under 16 rows, blocks
taking other OpenBLAS kernels than the whole batch) stay on one thread. The loops run in
Numba calling the BLAS themselves (no GIL a step), with the Python loops' bits."""
import numpy as np
import pytest

import ember_tensor as E
from ember_tensor._backends.cpu import rnn
from ember_tensor._backends.cpu import threads as cpu_threads

GATES = {"lstm": 4, "gru": 3, "rnn": 1}

# (layer, T, N, I, H, dtype, reverse, biases): each splits in two at 2 threads.
SPLIT_CASES = [
    ("lstm", 6, 32, 24, 128, np.float32, False, True),   # the benchmark's step shape, fewer steps
    ("lstm", 5, 40, 16, 64, np.float64, True, True),     # blocks of 16 and 24 rows
    ("lstm", 4, 33, 8, 48, np.float32, False, False),    # ragged last block
    ("gru", 6, 32, 24, 128, np.float32, True, True),
    ("gru", 5, 48, 16, 64, np.float64, False, False),
    ("rnn", 7, 64, 16, 256, np.float32, False, True),
    ("rnn", 3, 32, 16, 64, np.float64, True, True),
]


def _layer(layer, length, batch, features, hidden, dtype, reverse, biases, seed=0, input_grad=True):
    """(forward results, backward results) of one layer call, as lists of arrays."""
    rng = np.random.default_rng(seed)
    g = GATES[layer] * hidden

    def draw(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(dtype)
    x, w_ih, w_hh = draw(length, batch, features), draw(g, features, scale=0.2), draw(g, hidden, scale=0.2)
    b_ih, b_hh = (draw(g), draw(g)) if biases else (None, None)
    h0, c0, grad_out, grad_h, grad_c = (draw(batch, hidden), draw(batch, hidden), draw(length, batch, hidden),
                                        draw(batch, hidden), draw(batch, hidden))
    if layer == "lstm":
        fwd = rnn.lstm_forward(x, w_ih, w_hh, b_ih, b_hh, h0, c0, reverse)
        output, _, _, act, cells = fwd
        bwd = rnn.lstm_backward(grad_out, grad_h, grad_c, x, w_ih, w_hh, h0, c0, output, cells, act, reverse,
                                input_grad)
    elif layer == "gru":
        fwd = rnn.gru_forward(x, w_ih, w_hh, b_ih, b_hh, h0, reverse)
        bwd = rnn.gru_backward(grad_out, grad_h, x, w_ih, w_hh, h0, fwd[0], fwd[2], reverse, input_grad)
    else:
        fwd = rnn.rnn_forward(x, w_ih, w_hh, b_ih, b_hh, h0, False, reverse)
        bwd = rnn.rnn_backward(grad_out, grad_h, x, w_ih, w_hh, h0, fwd[0], False, reverse, input_grad)
    return list(fwd), list(bwd)


@pytest.fixture
def count_splits(monkeypatch):
    calls = []
    real = cpu_threads.run_parts
    monkeypatch.setattr(cpu_threads, "run_parts", lambda task, parts: calls.append(parts) or real(task, parts))
    return calls


def _at(threads, run):
    before = E.get_num_threads()
    E.set_num_threads(threads)
    try:
        return run()
    finally:
        E.set_num_threads(before)


def _case_id(c):
    direction, bias = "rev" if c[6] else "fwd", "bias" if c[7] else "nobias"
    return f"{c[0]}-T{c[1]}-N{c[2]}-H{c[4]}-{np.dtype(c[5]).name}-{direction}-{bias}"


@pytest.mark.parametrize("case", SPLIT_CASES, ids=_case_id)
def test_a_split_time_loop_has_a_one_thread_runs_bits(monkeypatch, count_splits, case):
    monkeypatch.setattr(rnn, "SPLIT_WORK", 1)  # small layers too: the bits are what is tested
    layer, length, batch, features, hidden, dtype = case[:6]
    serial = _at(1, lambda: _layer(*case))
    assert count_splits == []
    split = _at(2, lambda: _layer(*case))
    # Two time loops (forward, backward) split in two; the big weight-gradient GEMMs may too.
    assert count_splits.count(2) >= 2 and set(count_splits) == {2}
    for got, expected in zip(split[0] + split[1], serial[0] + serial[1]):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, expected)


# (layer, N, H, dtype): shapes whose loops stay whole at 2 threads, and why.
WHOLE_CASES = [
    ("lstm", 31, 64, np.float32),    # fewer than two blocks of 16 rows
    ("lstm", 64, 40, np.float32),    # H not a multiple of 16 (OpenBLAS's edge kernels)
    ("gru", 64, 136, np.float64),    # H a multiple of 8 only: other bits, seen on AVX-512
    ("gru", 32, 144, np.float64),    # 16-row blocks: small kernels, the whole: packed ones, inner dim 432
    ("lstm", 32, 112, np.float64),   # the same, inner dim 448
]


@pytest.mark.parametrize("layer, batch, hidden, dtype", WHOLE_CASES,
                         ids=lambda v: str(v) if not isinstance(v, type) else np.dtype(v).name)
def test_shapes_that_would_change_the_bits_stay_on_one_thread(monkeypatch, count_splits, layer, batch, hidden, dtype):
    monkeypatch.setattr(rnn, "SPLIT_WORK", 1)
    case = (layer, 3, batch, 8, hidden, dtype, False, True)
    assert _at(2, lambda: rnn._row_blocks(3, batch, hidden, GATES[layer])) == [(0, batch)]
    serial = _at(1, lambda: _layer(*case))
    split = _at(2, lambda: _layer(*case))
    for got, expected in zip(split[0] + split[1], serial[0] + serial[1]):
        np.testing.assert_array_equal(got, expected)


def test_a_whole_loops_large_step_product_still_splits_by_itself(count_splits):
    # H = 200 is not a multiple of 16: the loop runs whole, but each step's (64, 200) @
    # (200, 800) product (10M multiply-adds) is split by rows as any large product is.
    case = ("lstm", 3, 64, 8, 200, np.float32, False, True)
    serial = _at(1, lambda: _layer(*case))
    split = _at(2, lambda: _layer(*case))
    assert count_splits.count(2) >= 2 * 3  # each forward and backward step
    for got, expected in zip(split[0] + split[1], serial[0] + serial[1]):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("features, whole", [(64, True), (8, False)], ids=["even", "uneven"])
def test_the_sums_over_all_steps_run_whole_on_threads_at_once(monkeypatch, count_splits, dtype, features, whole):
    # The benchmark's backward products (dX, dW_ih, bias; dW_hh: 67M multiply-adds on
    # either side) go to two threads whole, in one hand-over; with a narrow input (dW_hh
    # 8x dX and dW_ih together) they cannot be shared out evenly and run in turn, the
    # large one split by rows (`gemm`).
    rng = np.random.default_rng(0)
    d_gates = rng.standard_normal((32, 32, 512)).astype(dtype)
    x, w_ih = rng.standard_normal((32, 32, features)).astype(dtype), rng.standard_normal((512, features)).astype(dtype)
    h_prev = rng.standard_normal((32, 32, 128)).astype(dtype)
    serial = _at(1, lambda: rnn._sequence_grads(d_gates, x, w_ih, d_gates, h_prev))
    assert count_splits == []
    through_gemm = []
    real_gemm = rnn.gemm
    monkeypatch.setattr(rnn, "gemm", lambda a, b: through_gemm.append(a.shape) or real_gemm(a, b))
    split = _at(2, lambda: rnn._sequence_grads(d_gates, x, w_ih, d_gates, h_prev))
    assert count_splits == [2]       # one hand-over: all products, or dW_hh's rows
    assert len(through_gemm) == (0 if whole else 3)
    flat = d_gates.reshape(1024, 512)
    expected = [flat.dot(w_ih).reshape(x.shape), flat.T.dot(x.reshape(1024, -1)), flat.sum(0),
                flat.T.dot(h_prev.reshape(1024, -1)), flat.sum(0)]
    tol = 1e-3 if dtype == np.float32 else 1e-9
    for got, whole, reference in zip(split, serial, expected):
        np.testing.assert_array_equal(got, whole)
        np.testing.assert_allclose(got, reference, rtol=tol, atol=tol)


def test_small_layers_and_one_thread_never_split(count_splits):
    # The default threshold: a layer of 4 steps, batch 32, hidden 16 is ~130K multiply-adds.
    _at(2, lambda: _layer("lstm", 4, 32, 8, 16, np.float32, False, True))
    _at(1, lambda: _layer("lstm", 6, 32, 24, 128, np.float32, False, True))
    assert count_splits == []


def test_an_empty_sequence_returns_the_initial_states():
    rng = np.random.default_rng(0)
    x, h0, c0 = np.empty((0, 4, 3)), rng.standard_normal((4, 16)), rng.standard_normal((4, 16))
    weights = {g: (rng.standard_normal((g * 16, 3)), rng.standard_normal((g * 16, 16))) for g in (1, 3, 4)}
    output, h_n, c_n, _, _ = rnn.lstm_forward(x, *weights[4], None, None, h0, c0, False)
    assert output.shape == (0, 4, 16)
    np.testing.assert_array_equal(h_n, h0)
    np.testing.assert_array_equal(c_n, c0)
    np.testing.assert_array_equal(rnn.gru_forward(x, *weights[3], None, None, h0, True)[1], h0)
    np.testing.assert_array_equal(rnn.rnn_forward(x, *weights[1], None, None, h0, False, False)[1], h0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_blas_rows_the_split_relies_on(monkeypatch, dtype):
    # What `_row_blocks` assumes of the BLAS, on a table of shapes: wherever it splits, each
    # block of both per-step GEMMs is bit for bit that block of the whole product. A BLAS
    # that breaks this fails here by shape, rather than in a layer's bits.
    monkeypatch.setattr(rnn, "SPLIT_WORK", 1)
    rng = np.random.default_rng(0)
    checked = 0
    for gates in (1, 3, 4):
        for hidden in (16, 64, 96, 112, 128, 144, 192, 256):
            for batch in (32, 40, 48, 64, 96):
                blocks = _at(4, lambda: rnn._row_blocks(1, batch, hidden, gates))
                if len(blocks) == 1:
                    continue
                h, w_t = rng.standard_normal((batch, hidden)).astype(dtype), \
                    rng.standard_normal((hidden, gates * hidden)).astype(dtype)
                d, w = rng.standard_normal((batch, gates * hidden)).astype(dtype), \
                    rng.standard_normal((gates * hidden, hidden)).astype(dtype)
                for a, b in ((h, w_t), (d, w)):
                    whole = a.dot(b)
                    for lo, hi in blocks:
                        np.testing.assert_array_equal(a[lo:hi].dot(b), whole[lo:hi],
                                                      err_msg=f"gates {gates}, hidden {hidden}, batch {batch}")
                checked += 1
    assert checked > 50


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", SPLIT_CASES, ids=_case_id)
def test_the_loops_without_the_gil_give_the_python_loops_bits(monkeypatch, case, threads):
    # The time loops run in Numba, calling the BLAS's cblas_?gemm themselves (no GIL a
    # step); where no OpenBLAS is found they run in Python with np.dot. Same bits.
    monkeypatch.setattr(rnn, "SPLIT_WORK", 1)
    if cpu_threads.blas_gemm_address("s" if case[5] == np.float32 else "d") is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS here: the time loops run in Python")
    numba_loops = _at(threads, lambda: _layer(*case))
    monkeypatch.setattr(cpu_threads, "blas_gemm_address", lambda kind: None)
    python_loops = _at(threads, lambda: _layer(*case))
    for got, expected in zip(numba_loops[0] + numba_loops[1], python_loops[0] + python_loops[1]):
        np.testing.assert_array_equal(got, expected)


def test_the_blas_gemm_is_numpys_openblas():
    if cpu_threads.blas_threads() is None:
        pytest.skip("NumPy's BLAS is not OpenBLAS here: the time loops run in Python")
    for kind in "sd":
        address, ilp64 = cpu_threads.blas_gemm_address(kind)
        assert address > 0 and isinstance(ilp64, bool)


@pytest.mark.parametrize("layer", ["lstm", "gru", "rnn"])
def test_non_contiguous_saved_arrays_give_the_same_gradients(layer):
    # The backward's arrays may arrive as views (a caller's slices): the loops get
    # C-contiguous copies and the results do not change.
    rng = np.random.default_rng(0)

    def strided(a):  # the same values in a non-contiguous view
        wide = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        wide[..., ::2] = a
        return wide[..., ::2]
    grad_out, grad_h, grad_c = (rng.standard_normal(s) for s in ((4, 16, 32), (16, 32), (16, 32)))
    x, w_ih, w_hh, h0, c0 = (rng.standard_normal(s) for s in ((4, 16, 8), (GATES[layer] * 32, 8),
                                                            (GATES[layer] * 32, 32), (16, 32), (16, 32)))
    if layer == "lstm":
        out = rnn.lstm_forward(x, w_ih, w_hh, None, None, h0, c0, True)
        args = (grad_out, grad_h, grad_c, x, w_ih, w_hh, h0, c0)
        plain = rnn.lstm_backward(*args, out[0], out[4], out[3], True)
        views = rnn.lstm_backward(*args, strided(out[0]), strided(out[4]), strided(out[3]), True)
    elif layer == "gru":
        out = rnn.gru_forward(x, w_ih, w_hh, None, None, h0, True)
        plain = rnn.gru_backward(grad_out, grad_h, x, w_ih, w_hh, h0, out[0], out[2], True)
        views = rnn.gru_backward(grad_out, grad_h, x, w_ih, w_hh, h0, strided(out[0]), strided(out[2]), True)
    else:
        out = rnn.rnn_forward(x, w_ih, w_hh, None, None, h0, False, True)
        plain = rnn.rnn_backward(grad_out, grad_h, x, w_ih, w_hh, h0, out[0], False, True)
        views = rnn.rnn_backward(grad_out, grad_h, x, w_ih, w_hh, h0, strided(out[0]), False, True)
    for got, expected in zip(views, plain):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("case", SPLIT_CASES, ids=_case_id)
def test_without_the_input_gradient_the_others_keep_their_bits(case):
    # input_grad=False (a first layer over data) skips dX's GEMM: dX is None, every other
    # gradient is the full backward's, bit for bit, at one thread and at two.
    for threads in (1, 2):
        _, full = _at(threads, lambda: _layer(*case))
        _, partial = _at(threads, lambda: _layer(*case, input_grad=False))
        assert partial[0] is None and full[0] is not None
        assert len(partial) == len(full)
        for want, got in zip(full[1:], partial[1:]):
            assert got.tobytes() == want.tobytes()
