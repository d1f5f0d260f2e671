"""torch.return_types: the named tuples of ops with several results print, index, name
their fields and pickle (by reference, to the same class) as PyTorch's do."""
import pickle

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor import return_types

X = et.tensor([[4.0, 2.0, 7.0], [1.0, 3.0, 0.5]])

RESULTS = {
    "max": (lambda: et.max(X, 1), ("values", "indices")),
    "min": (lambda: et.min(X, 0), ("values", "indices")),
    "sort": (lambda: et.sort(X), ("values", "indices")),
    "topk": (lambda: et.topk(X, 2), ("values", "indices")),
    "cummax": (lambda: et.cummax(X, 1), ("values", "indices")),
    "median": (lambda: et.median(X, 1), ("values", "indices")),
    "aminmax": (lambda: et.aminmax(X), ("min", "max")),
    "histogram": (lambda: et.histogram(X.flatten(), 3), ("hist", "bin_edges")),
    "linalg_svd": (lambda: et.linalg.svd(X), ("U", "S", "Vh")),
    "linalg_slogdet": (lambda: et.linalg.slogdet(et.eye(2)), ("sign", "logabsdet")),
    "linalg_inv_ex": (lambda: et.linalg.inv_ex(et.eye(2)), ("inverse", "info")),
}


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_result_names_fields_and_pickles_to_the_same_class(name):
    make, fields = RESULTS[name]
    result = make()
    assert type(result) is getattr(return_types, name)
    assert type(result).__name__ == name and type(result).n_fields == len(fields)
    assert repr(result).startswith(f"torch.return_types.{name}(\n{fields[0]}=")
    for position, field in enumerate(fields):
        assert getattr(result, field) is result[position]
    loaded = pickle.loads(pickle.dumps(result))
    assert type(loaded) is type(result)
    for ours, back in zip(result, loaded):
        np.testing.assert_array_equal(ours.numpy(), back.numpy())


def test_out_form_returns_the_out_class():
    values, indices = et.empty(2), et.empty(2, dtype=et.int64)
    result = et.max(X, 1, out=(values, indices))
    assert type(result) is return_types.max_out and result.values is values
    assert repr(result).startswith("torch.return_types.max_out(")


def test_structseq_checks_its_arity_and_is_made_once():
    with pytest.raises(TypeError, match="takes a 2-sequence"):
        return_types.max(et.zeros(1))
    assert return_types.structseq("max", ("values", "indices")) is return_types.max
    with pytest.raises(ValueError, match="already exists"):
        return_types.structseq("max", ("a", "b"))


def test_fields_match_pytorch():
    torch = pytest.importorskip("torch")
    for name, (_, fields) in RESULTS.items():
        assert getattr(torch.return_types, name).n_fields == len(fields)
        theirs = getattr(torch.return_types, name)(tuple(range(len(fields))))
        assert tuple(getattr(theirs, f) for f in fields) == tuple(range(len(fields)))
