"""torch.gradient against NumPy's gradient (every spacing form, both edge orders),
renorm and fill_diagonal_ against NumPy's formulas, with PyTorch's errors (checked on
PyTorch too where installed). Their gradients: ember-autograd's
tests/test_gradient_renorm_fill_diagonal_grads.py."""
import numpy as np
import pytest

import ember_tensor as et

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("spacing", ["none", "scalar", "per_dim", "coordinates"])
def test_gradient_matches_numpy(edge_order, spacing):
    f = RNG.normal(size=(4, 5))
    coordinates = [np.cumsum(RNG.uniform(0.5, 2.0, size=n)) for n in f.shape]
    ember_spacing, numpy_spacing = {
        "none": (None, ()), "scalar": (0.5, (0.5,)), "per_dim": ([0.5, 2.0], (0.5, 2.0)),
        "coordinates": ([et.tensor(c) for c in coordinates], tuple(coordinates))}[spacing]
    result = et.gradient(et.tensor(f), spacing=ember_spacing, edge_order=edge_order)
    expected = np.gradient(f, *numpy_spacing, edge_order=edge_order)
    assert len(result) == 2
    for r, e in zip(result, expected):
        np.testing.assert_allclose(r.numpy(), e, rtol=1e-12, atol=1e-12)


def test_gradient_along_chosen_dims_and_of_integers():
    f = np.arange(24.0).reshape(2, 3, 4) ** 2
    (along_last,) = et.gradient(et.tensor(f), dim=-1, spacing=[0.5])
    np.testing.assert_allclose(along_last.numpy(), np.gradient(f, 0.5, axis=-1))
    both = et.gradient(et.tensor(f), dim=(0, 2))
    np.testing.assert_allclose(both[1].numpy(), np.gradient(f, axis=2))
    (ints,) = et.gradient(et.tensor([1, 2, 4]))
    assert ints.dtype is et.float32 and ints.tolist() == [1.0, 1.5, 2.0]


def test_gradient_errors_are_pytorchs():
    t = et.zeros(3, 4)
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        et.gradient(t, edge_order=3)
    with pytest.raises(RuntimeError, match="a list of length equal to 'self.dim\\(\\) = 2', since dim argument "
                                           "was not given, but got a list of length 3"):
        et.gradient(t, spacing=[1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="expected each dimension size to be at least edge_order\\+1"):
        et.gradient(et.zeros(2), edge_order=2)


@pytest.mark.parametrize("p,dim", [(1, 0), (2, 1), (3.5, 0), (float("inf"), 1)])
def test_renorm_scales_only_slices_over_maxnorm(p, dim):
    a = RNG.normal(size=(4, 3)) * 3
    result = et.renorm(et.tensor(a), p, dim, 2.0).numpy()
    other = 1 - dim
    norms = np.linalg.norm(a, ord=p, axis=other, keepdims=True)
    expected = a * np.where(norms > 2.0, 2.0 / (norms + 1e-7), 1.0)
    np.testing.assert_allclose(result, expected, rtol=1e-12)
    inplace = et.tensor(a)
    assert inplace.renorm_(p, dim, 2.0) is inplace
    np.testing.assert_allclose(inplace.numpy(), expected, rtol=1e-12)


def test_renorm_errors_match_pytorch():
    torch = pytest.importorskip("torch")
    for args, message in [((0, 0, 5), "non-positive-norm not supported"),
                          ((1, 0, -1), "expected maxnorm to be >= 0 but got -1")]:
        for lib in (et, torch):
            with pytest.raises(RuntimeError, match=message):
                lib.renorm(lib.ones(2, 2), *args)
    for lib in (et, torch):
        with pytest.raises(RuntimeError, match="input needs at least 2 dimensions, got 1 dimensions"):
            lib.renorm(lib.ones(2), 1, 0, 1.0)


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), False), ((7, 3), True), ((4, 3), True),
                                        ((3, 5), True), ((2, 2, 2), False)])
def test_fill_diagonal_matches_numpy(shape, wrap):
    expected = np.zeros(shape)
    np.fill_diagonal(expected, 5.0, wrap=wrap)
    t = et.zeros(shape, dtype=et.float64)
    assert t.fill_diagonal_(5.0, wrap=wrap) is t
    np.testing.assert_array_equal(t.numpy(), expected)


def test_fill_diagonal_of_a_view_and_errors():
    base = et.zeros(4, 6)
    base[:, ::2].fill_diagonal_(1.0)  # a strided view fills its own diagonal in base
    assert base.nonzero().tolist() == [[0, 0], [1, 2], [2, 4]]
    assert et.zeros(2, 2, dtype=et.int64).fill_diagonal_(2.7).tolist() == [[2, 0], [0, 2]]
    with pytest.raises(RuntimeError, match="dimensions must larger than 1"):
        et.zeros(3).fill_diagonal_(1)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        et.zeros(2, 3, 2).fill_diagonal_(1)
