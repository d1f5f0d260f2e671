"""Ops whose output follows a mask or the nonzeros: nonzero (both forms), argwhere,
where(cond), masked_select, masked_fill and masked_scatter (and put_, which the CPU test
of masks also covers), against NumPy on the CPU.

The tests taking `device` hold the CPU to NumPy (or to PyTorch, `index_cases`) and CUDA
(Numba's simulator in CI) to the CPU, computed on the device (`cuda_guard`): the one value
read back there is the count that sizes the output, as PyTorch synchronises too.
"""
import numpy as np
import pytest

import ember_tensor as torch
from cuda_guard import DEVICES, cpu_result
from index_cases import ALL_DTYPES, SIGNED, check_on, layouts, lib_of, typed

X = np.arange(12.).reshape(3, 4)


def test_masks_and_put():
    """masked_fill, masked_select, masked_scatter and put_(accumulate) of both layouts; a broadcast mask, a 0-d value, a view."""
    mask = X % 3 == 0
    for x in layouts(X, torch.float64):
        np.testing.assert_array_equal(x.masked_fill(torch.tensor(mask), 0.).numpy(), np.where(mask, 0, X))
        np.testing.assert_array_equal(x.masked_select(torch.tensor(mask)).numpy(), X[mask])
        ref = X.copy()
        ref[mask] = np.arange(100., 100. + mask.sum())
        got = x.masked_scatter(torch.tensor(mask), torch.arange(100., 120., dtype=torch.float64))
        np.testing.assert_array_equal(got.numpy(), ref)
        ref = X.copy().reshape(-1)
        np.add.at(ref, [1, 1, 11], [1., 2., 3.])
        got = x.clone().put_(torch.tensor([1, 1, 11]), torch.tensor([1., 2., 3.]), accumulate=True)
        np.testing.assert_array_equal(got.numpy(), ref.reshape(3, 4))
    # a broadcast mask, a 0-d value tensor, and in place on a view
    row = torch.tensor([True, False, False, True])
    np.testing.assert_array_equal(torch.tensor(X).masked_fill(row, torch.tensor(-1.)).numpy(),
                                  np.where([True, False, False, True], -1, X))
    x = torch.tensor(X)
    x[1:].masked_fill_(row, 5.)
    assert x[0].tolist() == X[0].tolist() and x[2, 0].item() == 5.


def test_nonzero_argwhere_where():
    """nonzero (both forms), argwhere and where(cond) of both layouts as NumPy's; 0-d inputs."""
    a = np.array([[0, 1, 0], [2, 0, 3]])
    for x in layouts(a, torch.int64):
        np.testing.assert_array_equal(x.nonzero().numpy(), np.argwhere(a))
        np.testing.assert_array_equal(torch.argwhere(x).numpy(), np.argwhere(a))
        for got, ref in zip(x.nonzero(as_tuple=True), np.nonzero(a)):
            np.testing.assert_array_equal(got.numpy(), ref)
        for got, ref in zip(torch.where(x > 0), np.nonzero(a > 0)):
            np.testing.assert_array_equal(got.numpy(), ref)
    assert torch.tensor(3).nonzero().shape == (1, 0) and torch.tensor(0).nonzero().shape == (0, 0)
    assert [t.tolist() for t in torch.tensor(3).nonzero(as_tuple=True)] == [[0]]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_nonzero_argwhere_where_of_every_dtype(dtype, device):
    """nonzero (both forms), argwhere and where(cond) of both layouts, 0-d, empty, all-zero and NaN/-0 inputs."""
    for x in layouts(np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 4, 5]]), dtype):
        check_on(device, lambda t: t.nonzero(), x)
        check_on(device, lambda t: t.nonzero(as_tuple=True), x)
        check_on(device, lambda t: lib_of(t).argwhere(t), x)
        check_on(device, lambda t: lib_of(t).where(t != 0), x)
    check_on(device, lambda t: t.nonzero(), typed(3, dtype))
    check_on(device, lambda t: t.nonzero(as_tuple=True), typed(0, dtype))
    check_on(device, lambda t: t.nonzero(), torch.zeros(0, 2, dtype=dtype))
    check_on(device, lambda t: t.nonzero(), torch.zeros(2, 3, dtype=dtype))
    check_on(device, lambda t: lib_of(t).nonzero(t), torch.tensor([float("nan"), 0., -0.]).to(dtype)
             if dtype.is_floating_point else typed([1, 0, 1], dtype))


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_over_uneven_chunks(device):
    """98 flags: 9 scan chunks, the last one short, in both layouts."""
    flags = torch.tensor(np.random.default_rng(0).random((7, 14)) < 0.3)
    check_on(device, lambda t: t.nonzero(), flags)
    check_on(device, lambda t: t.t().nonzero(as_tuple=True), flags)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.bool],
                         ids=str)
def test_masked_ops_of_every_dtype(dtype, device):
    """masked_select (a broadcast mask too), masked_fill and masked_scatter of both layouts; 0-d; their errors."""
    mask = torch.tensor(SIGNED > 0)
    source = typed(np.arange(20), dtype)
    for x in layouts(SIGNED, dtype):
        check_on(device, lambda t, m: t.masked_select(m), x, mask)
        check_on(device, lambda t, m: t.masked_select(m), x, mask[0])
        check_on(device, lambda t, m: t.masked_fill(m, 1), x, mask)
        check_on(device, lambda t, m, s: t.masked_scatter(m, s), x, mask, source)
        check_on(device, lambda t, m, s: t.masked_scatter(m, s), x, mask[:, :1], source)
    check_on(device, lambda t, m: t.masked_select(m), torch.tensor(2.), torch.tensor(True))
    with pytest.raises(RuntimeError):
        cpu_result(device, lambda t, m, s: t.masked_scatter(m, s), torch.tensor(SIGNED), mask, torch.ones(2))
    with pytest.raises(RuntimeError):
        cpu_result(device, lambda t, m: t.masked_select(m), torch.tensor(SIGNED), mask.int())
