"""F.embedding_bag / nn.EmbeddingBag as one op (nn_ops.embedding_bag and its rule): values
and gradients of the weight and of per_sample_weights against PyTorch for every mode,
padding_idx, include_last_offset, 1-D and 2-D input, empty bags, dtype and dense/sparse
gradient; gradcheck and double backward in float64; scale_grad_by_freq against NumPy;
PyTorch's errors."""
import itertools

import numpy as np
import pytest

import ember_autograd
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as et

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)
NUM, DIM = 7, 5
# Bag 1 is empty, bag 3 holds only padding (index 2) when padding_idx is 2.
INDICES_1D = np.array([1, 2, 4, 4, 0, 2, 2, 6, 5, 1])
OFFSETS = np.array([0, 2, 2, 5, 7])
INDICES_2D = np.array([[1, 2, 4], [4, 0, 2], [2, 2, 2], [6, 5, 1]])


def _cases():
    for mode, weighted, padding_idx, last, two_d, dtype, sparse in itertools.product(
            ("sum", "mean", "max"), (False, True), (None, 2, -1), (False, True), (False, True),
            (np.float32, np.float64), (False, True)):
        if weighted and mode != "sum" or sparse and mode == "max" or two_d and last:
            continue
        yield mode, weighted, padding_idx, last, two_d, dtype, sparse


def _inputs(two_d, last):
    if two_d:
        return INDICES_2D, None
    return INDICES_1D, (np.append(OFFSETS, len(INDICES_1D)) if last else OFFSETS)


def _run(lib, weight, per_sample, indices, offsets, upstream, **kwargs):
    w = lib.tensor(weight, requires_grad=True)
    psw = None if per_sample is None else lib.tensor(per_sample, requires_grad=True)
    off = None if offsets is None else lib.tensor(offsets)
    module = F if lib is et else torch.nn.functional
    out = module.embedding_bag(lib.tensor(indices), w, off, per_sample_weights=psw, **kwargs)
    (out * lib.tensor(upstream)).sum().backward()
    grad = w.grad.to_dense() if w.grad.is_sparse else w.grad
    return (out.detach().numpy(), grad.numpy(), None if psw is None else psw.grad.numpy(), w.grad.is_sparse,
            type(out.grad_fn).__name__)


@pytest.mark.parametrize("mode,weighted,padding_idx,last,two_d,dtype,sparse", list(_cases()))
def test_embedding_bag_matches_pytorch(mode, weighted, padding_idx, last, two_d, dtype, sparse):
    indices, offsets = _inputs(two_d, last)
    weight = RNG.standard_normal((NUM, DIM)).astype(dtype)
    per_sample = RNG.standard_normal(indices.shape).astype(dtype) if weighted else None
    bags = len(indices) if two_d else len(OFFSETS)
    upstream = RNG.standard_normal((bags, DIM)).astype(dtype)
    kwargs = dict(mode=mode, padding_idx=padding_idx, include_last_offset=last, sparse=sparse)
    got = _run(et, weight, per_sample, indices, offsets, upstream, **kwargs)
    want = _run(torch, weight, per_sample, indices, offsets, upstream, **kwargs)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape
    np.testing.assert_allclose(got[0], want[0], rtol=tol, atol=tol)
    np.testing.assert_allclose(got[1], want[1], rtol=tol, atol=tol)
    if weighted:
        np.testing.assert_allclose(got[2], want[2], rtol=tol * 10, atol=tol * 10)
    assert got[3] == want[3] == sparse
    assert got[4] == want[4] or mode == "max"  # max: the deterministic-algorithms guard node on top


def test_embedding_bag_int32_indices_and_module():
    bag = nn.EmbeddingBag(NUM, DIM, mode="sum")
    ref = torch.nn.EmbeddingBag(NUM, DIM, mode="sum")
    ref.weight.data = torch.tensor(bag.weight.detach().numpy())
    idx, off = INDICES_1D.astype(np.int32), OFFSETS.astype(np.int32)
    got = bag(et.tensor(idx), et.tensor(off))
    np.testing.assert_allclose(got.detach().numpy(), ref(torch.tensor(idx), torch.tensor(off)).detach().numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradcheck_and_double_backward(mode):
    weight = et.tensor(RNG.standard_normal((NUM, 3)), requires_grad=True)
    idx, off = et.tensor([1, 2, 4, 0, 1, 6]), et.tensor([0, 3, 3])
    psw = et.tensor(RNG.standard_normal(6), requires_grad=True) if mode == "sum" else None

    def bags(w, *weights):
        return F.embedding_bag(idx, w, off, mode=mode, padding_idx=4, per_sample_weights=weights[0] if weights
                               else None)
    inputs = (weight, psw) if psw is not None else (weight,)
    assert ember_autograd.gradcheck(bags, inputs, eps=1e-6, atol=1e-6)
    assert ember_autograd.gradgradcheck(bags, inputs, eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("sparse", [False, True])
def test_scale_grad_by_freq_divides_by_each_rows_count(mode, sparse):
    """Each row's gradient divided by how often the batch looks it up (padding entries
    counted, as embedding does): PyTorch's CPU kernel divides by a count read at the wrong
    position, so NumPy is the reference here."""
    weight = RNG.standard_normal((NUM, 3)).astype(np.float32)
    upstream = RNG.standard_normal((len(OFFSETS), 3)).astype(np.float32)
    w = et.tensor(weight, requires_grad=True)
    out = F.embedding_bag(et.tensor(INDICES_1D), w, et.tensor(OFFSETS), mode=mode, padding_idx=2,
                          scale_grad_by_freq=True, sparse=sparse)
    (out * et.tensor(upstream)).sum().backward()
    ends = np.append(OFFSETS[1:], len(INDICES_1D))
    counts = np.bincount(INDICES_1D, minlength=NUM)
    want = np.zeros_like(weight)
    for b, (s, e) in enumerate(zip(OFFSETS, ends)):
        kept = [r for r in INDICES_1D[s:e] if r != 2]
        for r in kept:
            want[r] += upstream[b] / (len(kept) if mode == "mean" else 1) / counts[r]
    grad = w.grad.to_dense() if sparse else w.grad
    np.testing.assert_allclose(grad.numpy(), want, rtol=1e-6)


def test_max_norm_renormalises_the_looked_up_rows_as_pytorch():
    weight = (RNG.standard_normal((NUM, DIM)) * 3).astype(np.float32)
    got, want = et.tensor(weight), torch.tensor(weight)
    F.embedding_bag(et.tensor(INDICES_1D), got, et.tensor(OFFSETS), max_norm=1.0)
    torch.nn.functional.embedding_bag(torch.tensor(INDICES_1D), want, torch.tensor(OFFSETS), max_norm=1.0)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5)


def test_empty_input_gives_zero_bags():
    out = F.embedding_bag(et.tensor([], dtype=et.int64), et.ones(3, 2), et.tensor([0, 0]), mode="max")
    assert out.tolist() == [[0.0, 0.0], [0.0, 0.0]]


@pytest.mark.parametrize("call", [
    lambda lib, F_: F_.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([1])),
    lambda lib, F_: F_.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([0, 5])),
    lambda lib, F_: F_.embedding_bag(lib.tensor([0, 7]), lib.ones(3, 2), lib.tensor([0])),
    lambda lib, F_: F_.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([0]), mode="max", sparse=True),
    lambda lib, F_: F_.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([0]), mode="max",
                                     scale_grad_by_freq=True),
    lambda lib, F_: F_.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2), lib.tensor([0]), padding_idx=3),
    lambda lib, F_: F_.embedding_bag(lib.tensor([0.0]), lib.ones(3, 2), lib.tensor([0])),
])
def test_errors_are_pytorchs(call):
    with pytest.raises(Exception) as want:
        call(torch, torch.nn.functional)
    with pytest.raises(type(want.value)) as got:
        call(et, F)
    assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


def test_negative_padding_idx_below_the_table_is_pytorchs_error():
    with pytest.raises(RuntimeError) as want:
        torch.nn.functional.embedding_bag(torch.tensor([0]), torch.ones(3, 2), torch.tensor([0]), padding_idx=-4)
    with pytest.raises(RuntimeError, match="padding_idx must be within") as got:
        F.embedding_bag(et.tensor([0]), et.ones(3, 2), et.tensor([0]), padding_idx=-4)
    assert str(got.value) == str(want.value)


def test_non_contiguous_indices_offsets_and_weights():
    weight = RNG.standard_normal((NUM, 2 * DIM)).astype(np.float32)
    wide_idx = np.stack([INDICES_1D, INDICES_1D[::-1]], 1)        # column 0 is INDICES_1D, strided
    wide_off = np.repeat(OFFSETS, 2)                                 # every other one is OFFSETS
    psw = np.stack([RNG.standard_normal(len(INDICES_1D)), np.zeros(len(INDICES_1D))], 1).astype(np.float32)
    results = []
    for lib, module in ((et, F), (torch, torch.nn.functional)):
        w = lib.tensor(weight)[:, ::2]
        out = module.embedding_bag(lib.tensor(wide_idx)[:, 0], w, lib.tensor(wide_off)[::2], mode="sum",
                                   per_sample_weights=lib.tensor(psw)[:, 0])
        results.append(out.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["sum", "max"])
def test_many_bags_split_over_threads_match_pytorch(mode):
    """Above the loops' parallel threshold (64K row elements) ranges of bags run on several
    threads (where the budget allows): the same values as PyTorch's."""
    before = et.get_num_threads()
    et.set_num_threads(2)
    try:
        _compare_many_bags(mode)
    finally:
        et.set_num_threads(before)


def _compare_many_bags(mode):
    lengths = RNG.integers(0, 40, 300)
    indices = RNG.integers(0, 50, int(lengths.sum()))
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    weight = RNG.standard_normal((50, 64)).astype(np.float32)
    got = F.embedding_bag(et.tensor(indices), et.tensor(weight), et.tensor(offsets), mode=mode)
    want = torch.nn.functional.embedding_bag(torch.tensor(indices), torch.tensor(weight), torch.tensor(offsets),
                                             mode=mode)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
