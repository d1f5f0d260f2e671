"""Large inputs run the serial CPU kernels over ranges on several threads at once
(`threads.split`): the results must be those of one serial call, for every kernel family
that splits (elementwise, reductions, softmax, im2col/col2im, pooling, batch norm).

The thresholds are lowered and the part count forced to 3, so small inputs take the split
path with uneven ranges on any machine (one core included)."""
import math

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor._backends.cpu import elementwise, reduction, threads
from ember_tensor._backends.cpu.kernels import conv, nn, pooling, softmax

rng = np.random.default_rng(7)


def _run_both(monkeypatch, fn):
    """(fn() serial, fn() split over 3 threads)."""
    monkeypatch.setattr(threads, "_budget", 1)
    serial = fn()
    monkeypatch.setattr(threads, "_budget", 3)
    monkeypatch.setattr(threads, "part_count", lambda: 3)
    for module in (elementwise, reduction, softmax, conv, nn, pooling):
        monkeypatch.setattr(module, "PARALLEL_THRESHOLD", 1)
    return serial, fn()


def _assert_same(serial, split, exact=True):
    for a, b in zip(serial, split):
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_elementwise_layouts(monkeypatch):
    x = et.tensor(rng.standard_normal((37, 41)))
    y = et.tensor(rng.standard_normal(41))

    def ops():
        return [(x + x).numpy(), (x * 2.5).numpy(), (3.0 - x).numpy(), x.exp().numpy(),
                (x * y).numpy(), (x.t() + 1).numpy(), et.where(x > 0, x, y).numpy(),
                x[:, ::3].sigmoid().numpy(), (x[:1] * y).numpy()]
    _assert_same(*_run_both(monkeypatch, ops))


def test_reductions_rows_columns_and_chunked_rows(monkeypatch):
    monkeypatch.setattr(reduction, "_MIN_CHUNK", 16)  # a few long rows are cut into pieces
    x = et.tensor(rng.standard_normal((9, 301)))
    i = et.tensor(rng.integers(-5, 5, (9, 301)))

    def ops():
        out = []
        for dims in ((), (0,), (1,)):
            for name in ("sum", "mean", "amax", "amin", "prod"):
                out.append(getattr(x, name)(*dims).numpy())
            out += [x.var(*dims).numpy(), x.argmax(*dims).numpy(), x.argmin(*dims).numpy(),
                    i.sum(*dims).numpy(), (x > 0).all(*dims).numpy(), x.norm().numpy()]
        out.append(x.median(1).values.numpy())
        out.append(x.median(1).indices.numpy())
        return out
    # Chunked sums merge pieces: equal up to the rounding of the merge order.
    _assert_same(*_run_both(monkeypatch, ops), exact=False)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_softmax_forward_and_backward(monkeypatch, dim):
    x = et.tensor(rng.standard_normal((5, 7, 600)), requires_grad=False)
    g = rng.standard_normal((5, 7, 600))

    def ops():
        out = []
        for log in (False, True):
            shape = (math.prod(x.shape[:dim]), x.shape[dim], math.prod(x.shape[dim + 1:]))
            x3 = np.ascontiguousarray(x.numpy()).reshape(shape)
            y = softmax.softmax_forward(x3, log)
            out += [y, softmax.softmax_backward(np.ascontiguousarray(g).reshape(shape), y, log)]
        return out
    _assert_same(*_run_both(monkeypatch, ops))


def test_convolution_pooling_and_batch_norm(monkeypatch):
    x = rng.standard_normal((3, 5, 11, 9))
    g = rng.standard_normal((3, 5, 11, 9))
    plan_args = ((3, 3), (2, 1), (1, 1), (1, 1))

    def ops():
        out = []
        oh, ow = (11 + 2 - 3) // 2 + 1, 9
        cols = np.zeros((3, 5 * 9, oh * ow))
        conv.im2col_block(x, *plan_args, (oh, ow), cols, parallel=True)
        back = np.empty_like(x)
        conv.col2im_block(cols, *plan_args, (oh, ow), back, parallel=True)
        out += [cols, back]
        # The whole-batch layout (C*K, N*L) of the small-output convolutions.
        c2 = np.zeros((5 * 9, 3 * 36))
        conv.im2col_block(x, (3, 3), (1, 2), (0, 0), (1, 1), (9, 4), c2, parallel=True)
        back2 = np.empty_like(x)
        out += [c2, conv.col2im_block(c2, (3, 3), (1, 2), (0, 0), (1, 1), (9, 4), back2, parallel=True)]
        values, indices = pooling.max_pool_2d(x, (3, 2), (2, 2), (1, 0), (1, 1), (6, 4))
        out += [values, indices, pooling.max_pool_backward(values.reshape(15, 24), indices.reshape(15, 24), 99)]
        x3 = x.reshape(3, 5, 99)
        mean, var = nn.batch_norm_stats(x3)
        invstd = 1 / np.sqrt(var + 1e-5)
        out += [mean, var, nn.batch_norm_apply(x3, invstd, -mean * invstd)]
        out += list(nn.batch_norm_backward(g.reshape(3, 5, 99), x3, mean, invstd, np.ones(5), True))
        return out
    _assert_same(*_run_both(monkeypatch, ops))


def test_a_kernel_inside_a_pool_worker_runs_serially(monkeypatch):
    # A part that launches another split kernel must not wait on the pool it runs in.
    monkeypatch.setattr(threads, "_budget", 3)
    monkeypatch.setattr(elementwise, "PARALLEL_THRESHOLD", 1)
    x = et.tensor(rng.standard_normal(1000))
    seen = []

    def part(lo, hi):
        seen.append((threads.parallel(1 << 30, 1), float((x[lo:hi] * 2).sum())))
    threads.split(part, 1000, 3)
    flags = [flag for flag, _ in seen]
    assert sorted(flags) == [False, False, True]  # the caller's part may split; the workers' may not
    assert sum(total for _, total in seen) == pytest.approx(float(x.sum()) * 2)
