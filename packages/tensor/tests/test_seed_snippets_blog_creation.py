"""Acceptance tests: the PyTorch 0.4.0 migration guide, second half.

Seed: shared/seeds/pytorch-blog-feed-2017-2018.txt, post "PyTorch 0.4.0 Migration Guide",
section "dtypes, devices and NumPy-style creation functions" (torch.dtype table,
torch.device, torch.layout, "Creating Tensors", torch.tensor, *_like, new_*, the table of
creation functions) and "Writing device-agnostic code". CUDA lines are run on the CPU
(device omitted) or left out. Type promotion follows the rule DESIGN.md §2 states, which
extends the seed's `torch.tensor([1, 2.3]).dtype` example.

Every expected value below was produced by running the same code with real PyTorch
(2.13, CPU).
"""
import numpy as np
import pytest

import ember_tensor as torch


# --- "torch.dtype": the table of dtypes and their tensor types ----------------------------

# seed: "Below is a complete list of available torch.dtypes (data types) and their
#        corresponding tensor types." (one row per line of the table)
DTYPE_TABLE = [
    # dtype name, alias name or None, legacy tensor type, repr of LegacyType([1, 2])
    ("float32", "float", "FloatTensor", "tensor([1., 2.])"),
    ("float64", "double", "DoubleTensor", "tensor([1., 2.], dtype=torch.float64)"),
    ("float16", "half", "HalfTensor", "tensor([1., 2.], dtype=torch.float16)"),
    ("uint8", None, "ByteTensor", "tensor([1, 2], dtype=torch.uint8)"),
    ("int8", None, "CharTensor", "tensor([1, 2], dtype=torch.int8)"),
    ("int16", "short", "ShortTensor", "tensor([1, 2], dtype=torch.int16)"),
    ("int32", "int", "IntTensor", "tensor([1, 2], dtype=torch.int32)"),
    ("int64", "long", "LongTensor", "tensor([1, 2])"),
]


@pytest.mark.parametrize("name, alias, legacy, legacy_repr", DTYPE_TABLE)
def test_dtype_table(name, alias, legacy, legacy_repr):
    dtype = getattr(torch, name)
    assert repr(dtype) == f"torch.{name}"
    assert str(dtype) == f"torch.{name}"
    if alias is not None:
        assert getattr(torch, alias) is dtype
    # "The dtype of a tensor can be access via its dtype attribute."
    t = torch.zeros(1, dtype=dtype)
    assert t.dtype is dtype
    assert t.type() == f"torch.{legacy}"
    # the legacy constructor builds a tensor of that dtype from data
    legacy_cls = getattr(torch, legacy)
    x = legacy_cls([1, 2])
    assert x.dtype is dtype
    assert x.type() == f"torch.{legacy}"
    assert isinstance(x, legacy_cls)
    assert repr(x) == legacy_repr


# --- "torch.device" and "torch.layout" -----------------------------------------------------

# seed: "It can be initilized with torch.device('{device_type}') or
#        torch.device('{device_type}:{device_ordinal}')." / "The device of a tensor can be
#        accessed via its device attribute."
def test_device_objects_and_tensor_device():
    cpu = torch.device("cpu")
    assert repr(cpu) == "device(type='cpu')"
    assert str(cpu) == "cpu"
    assert cpu.type == "cpu" and cpu.index is None
    cpu0 = torch.device("cpu:0")
    assert repr(cpu0) == "device(type='cpu', index=0)"
    assert str(cpu0) == "cpu:0"
    assert repr(torch.device("cpu", 0)) == "device(type='cpu', index=0)"
    assert torch.device("cpu") == torch.device("cpu")
    x = torch.randn(3)
    assert x.device == cpu
    assert str(x.device) == "cpu"


# seed: "The layout of a tensor can be access via its layout attribute." (torch.strided is
#        the default)
def test_layout_is_strided():
    x = torch.ones(2, 2)
    assert x.layout is torch.strided
    assert repr(x.layout) == "torch.strided"


# --- "Creating Tensors" ----------------------------------------------------------------

# seed: >>> x = torch.randn(3, 3, dtype=torch.float64, device=device)
#       >>> x.requires_grad # default is False
#       >>> x = torch.zeros(3, requires_grad=True)
#       >>> x.requires_grad
# (device = torch.device("cpu") instead of "cuda:1"; randn values are random)
def test_creation_keywords_dtype_device_requires_grad():
    device = torch.device("cpu")
    x = torch.randn(3, 3, dtype=torch.float64, device=device)
    assert x.dtype == torch.float64
    assert x.device == device
    assert str(x.shape) == "torch.Size([3, 3])"
    assert x.requires_grad is False
    x = torch.zeros(3, requires_grad=True)
    assert x.requires_grad is True
    assert repr(x) == "tensor([0., 0., 0.], requires_grad=True)"
    # the device may also be given as a string
    z = torch.zeros(2, 2, dtype=torch.float64, device="cpu")
    assert repr(z) == "tensor([[0., 0.],\n        [0., 0.]], dtype=torch.float64)"


# --- "torch.tensor(data, ...)" ------------------------------------------------------------

# seed: >>> torch.tensor([[1], [2], [3]], dtype=torch.half, device=cuda)
# (run on the CPU; today's PyTorch prints float16 values with a trailing dot)
def test_tensor_from_nested_list_with_dtype_half():
    x = torch.tensor([[1], [2], [3]], dtype=torch.half)
    assert x.dtype == torch.float16
    assert repr(x) == "tensor([[1.],\n        [2.],\n        [3.]], dtype=torch.float16)"


# seed: >>> torch.tensor(1) # scalar
#       tensor(1)
def test_tensor_from_python_scalar():
    assert repr(torch.tensor(1)) == "tensor(1)"
    assert torch.tensor(1).dim() == 0
    assert repr(torch.tensor(2.5)) == "tensor(2.5000)"
    assert repr(torch.tensor(True)) == "tensor(True)"


# seed: >>> torch.tensor([1, 2.3]).dtype # type inferece
#       torch.float32
#       >>> torch.tensor([1, 2]).dtype # type inferece
#       torch.int64
@pytest.mark.parametrize(
    "make, dtype_name, expected_repr",
    [
        (lambda: torch.tensor([1, 2.3]), "float32", "tensor([1.0000, 2.3000])"),
        (lambda: torch.tensor([1, 2]), "int64", "tensor([1, 2])"),
        (lambda: torch.tensor([True, False]), "bool", "tensor([ True, False])"),
        (lambda: torch.tensor([[1, 2], [3, 4.5]]), "float32", None),
        (lambda: torch.tensor([1, 2.3], dtype=torch.float64), "float64", None),
        (lambda: torch.tensor(np.array([1, 2], dtype=np.int32)), "int32", None),
        (lambda: torch.tensor([]), "float32", "tensor([])"),
    ],
)
def test_tensor_dtype_inference(make, dtype_name, expected_repr):
    x = make()
    assert x.dtype is getattr(torch, dtype_name)
    assert str(x.dtype) == f"torch.{dtype_name}"
    if expected_repr is not None:
        assert repr(x) == expected_repr


# DESIGN.md §2: "PyTorch's type promotion (a Python scalar does not up-cast a tensor;
# int tensor / int → float; torch.tensor([1, 2.3]) is float32)".
@pytest.mark.parametrize(
    "compute, expected_repr",
    [
        (lambda: torch.tensor([1, 2]) + 1.5, "tensor([2.5000, 3.5000])"),
        (lambda: torch.tensor([1, 2]) / 2, "tensor([0.5000, 1.0000])"),
        (lambda: torch.tensor([1, 2]) * 2, "tensor([2, 4])"),
        (lambda: torch.tensor([1., 2.]) * 2, "tensor([2., 4.])"),
        (lambda: torch.tensor([1, 2], dtype=torch.int32) + torch.tensor([1, 2]),
         "tensor([2, 4])"),
        (lambda: torch.tensor([1., 2.]) + torch.tensor([1., 2.], dtype=torch.float64),
         "tensor([2., 4.], dtype=torch.float64)"),
        (lambda: torch.tensor([1, 2], dtype=torch.uint8) + 1,
         "tensor([2, 3], dtype=torch.uint8)"),
        (lambda: torch.tensor([1, 2], dtype=torch.int8) + torch.tensor([1, 2], dtype=torch.uint8),
         "tensor([2, 4], dtype=torch.int16)"),
        (lambda: torch.tensor([1., 2.], dtype=torch.float16) + 1.5,
         "tensor([2.5000, 3.5000], dtype=torch.float16)"),
        # a 0-d tensor of a higher category up-casts; of the same category it does not
        (lambda: torch.tensor([1, 2]) + torch.tensor(1.5), "tensor([2.5000, 3.5000])"),
        (lambda: torch.tensor([1., 2.]) + torch.tensor(1., dtype=torch.float64),
         "tensor([2., 3.])"),
        (lambda: torch.tensor([True, False]) + 1, "tensor([2, 1])"),
        (lambda: torch.tensor([True, False]) + torch.tensor([True, True]),
         "tensor([True, True])"),
        (lambda: torch.tensor([1, 2]) > 1, "tensor([False,  True])"),
    ],
)
def test_type_promotion(compute, expected_repr):
    assert repr(compute()) == expected_repr


def test_in_place_op_cannot_change_result_type():
    # the companion of "a Python scalar does not up-cast a tensor": an in-place result
    # must fit the destination's dtype
    x = torch.ones(3, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x.add_(torch.ones(3) * 1.5)


# --- torch.*_like and tensor.new_* -------------------------------------------------------

# seed: >>> x = torch.randn(3, dtype=torch.float64)
#       >>> torch.zeros_like(x)
#       >>> torch.zeros_like(x, dtype=torch.int)
def test_zeros_like_keeps_attributes_unless_told():
    x = torch.randn(3, dtype=torch.float64)
    assert repr(torch.zeros_like(x)) == "tensor([0., 0., 0.], dtype=torch.float64)"
    assert repr(torch.zeros_like(x, dtype=torch.int)) == "tensor([0, 0, 0], dtype=torch.int32)"


# seed: >>> x = torch.randn(3, dtype=torch.float64)
#       >>> x.new_ones(2)
#       >>> x.new_ones(4, dtype=torch.int)
def test_new_ones_keeps_attributes_unless_told():
    x = torch.randn(3, dtype=torch.float64)
    assert repr(x.new_ones(2)) == "tensor([1., 1.], dtype=torch.float64)"
    assert repr(x.new_ones(4, dtype=torch.int)) == "tensor([1, 1, 1, 1], dtype=torch.int32)"


# seed: "you can either use a tuple (e.g., torch.zeros((2, 3))) or variable arguments
#        (e.g., torch.zeros(2, 3)) in most cases."
def test_shape_as_tuple_or_varargs():
    expected = "tensor([[0., 0., 0.],\n        [0., 0., 0.]])"
    assert repr(torch.zeros((2, 3))) == expected
    assert repr(torch.zeros(2, 3)) == expected
    assert torch.ones((2, 3)).shape == torch.ones(2, 3).shape == (2, 3)
    assert torch.empty((2, 3)).shape == torch.empty(2, 3).shape


# seed: the table of creation functions, column "torch.*_like variant" (✔ for empty,
#        zeros, ones, full, rand, randn, randint)
@pytest.mark.parametrize(
    "name, args", [("empty_like", ()), ("zeros_like", ()), ("ones_like", ()),
                   ("full_like", (7,)), ("rand_like", ()), ("randn_like", ()),
                   ("randint_like", (10,)), ("randint_like", (3, 10))],
)
def test_like_variants_keep_shape_and_dtype(name, args):
    x = torch.randn(2, 3, dtype=torch.float64)
    y = getattr(torch, name)(x, *args)
    assert y.dtype == torch.float64
    assert str(y.shape) == "torch.Size([2, 3])"
    assert y.device == x.device


def test_like_variants_values():
    x = torch.randn(3, dtype=torch.float64)
    assert repr(torch.ones_like(x)) == "tensor([1., 1., 1.], dtype=torch.float64)"
    assert repr(torch.full_like(x, 7)) == "tensor([7., 7., 7.], dtype=torch.float64)"
    r = torch.rand_like(x).numpy()
    assert ((r >= 0) & (r < 1)).all()
    r = torch.randint_like(x, 3, 10).numpy()
    assert ((r >= 3) & (r < 10) & (r == np.floor(r))).all()


# seed: the same table, column "tensor.new_* variant" (✔ for empty, zeros, ones, full,
#        tensor)
def test_new_variants():
    x = torch.randn(3, dtype=torch.float64)
    e = x.new_empty(2, 3)
    assert e.dtype == torch.float64 and str(e.shape) == "torch.Size([2, 3])"
    assert repr(x.new_zeros(2)) == "tensor([0., 0.], dtype=torch.float64)"
    assert repr(x.new_full((2,), 3)) == "tensor([3., 3.], dtype=torch.float64)"
    assert repr(x.new_tensor([1, 2])) == "tensor([1., 2.], dtype=torch.float64)"
    assert repr(x.new_tensor([1, 2], dtype=torch.int64)) == "tensor([1, 2])"


# seed: the same table, rows torch.empty ... torch.eye (deterministic ones by value,
#        random ones by their properties)
@pytest.mark.parametrize(
    "make, expected_repr",
    [
        (lambda: torch.zeros(2), "tensor([0., 0.])"),
        (lambda: torch.ones(2, dtype=torch.int64), "tensor([1, 1])"),
        (lambda: torch.full((2, 3), 7), "tensor([[7, 7, 7],\n        [7, 7, 7]])"),
        (lambda: torch.full((2,), 0.5), "tensor([0.5000, 0.5000])"),
        (lambda: torch.full((2,), True), "tensor([True, True])"),
        (lambda: torch.arange(5), "tensor([0, 1, 2, 3, 4])"),
        (lambda: torch.arange(5.), "tensor([0., 1., 2., 3., 4.])"),
        (lambda: torch.arange(1, 10, 3), "tensor([1, 4, 7])"),
        (lambda: torch.arange(0, 1, 0.25), "tensor([0.0000, 0.2500, 0.5000, 0.7500])"),
        (lambda: torch.linspace(0, 1, 5), "tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])"),
        (lambda: torch.linspace(-1, 1, steps=3), "tensor([-1.,  0.,  1.])"),
        (lambda: torch.logspace(0, 2, 3), "tensor([  1.,  10., 100.])"),
        (lambda: torch.logspace(0, 3, steps=4), "tensor([   1.,   10.,  100., 1000.])"),
        (lambda: torch.eye(3), "tensor([[1., 0., 0.],\n        [0., 1., 0.],\n        [0., 0., 1.]])"),
        (lambda: torch.eye(2, 3), "tensor([[1., 0., 0.],\n        [0., 1., 0.]])"),
    ],
)
def test_creation_functions(make, expected_repr):
    assert repr(make()) == expected_repr


def test_random_creation_functions():
    e = torch.empty(2, 3)
    assert e.dtype == torch.float32 and str(e.shape) == "torch.Size([2, 3])"
    r = torch.rand(2, 3)
    assert r.dtype == torch.float32 and str(r.shape) == "torch.Size([2, 3])"
    assert ((r.numpy() >= 0) & (r.numpy() < 1)).all()
    assert torch.randn(2, 3).dtype == torch.float32
    i = torch.randint(0, 10, (3, 4))
    assert i.dtype == torch.int64 and str(i.shape) == "torch.Size([3, 4])"
    assert ((i.numpy() >= 0) & (i.numpy() < 10)).all()
    assert torch.randint(10, (5,)).shape == (5,)
    p = torch.randperm(5)
    assert p.dtype == torch.int64
    assert sorted(p.numpy().tolist()) == [0, 1, 2, 3, 4]


# seed: the same table, row "torch.arange, torch.range, and torch.linspace"
#        (torch.range is deprecated today and warns; its end is inclusive)
def test_range_is_deprecated_and_inclusive():
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = torch.range(1, 4)
    assert repr(r) == "tensor([1., 2., 3., 4.])"


# seed: same table, "torch.from_numpy* | from NumPy ndarray (sharing storage without
#        copying)" and "*: torch.from_numpy only takes in a NumPy ndarray"
def test_from_numpy_shares_storage():
    a = np.array([1.0, 2.0, 3.0])
    t = torch.from_numpy(a)
    assert t.dtype == torch.float64
    a[0] = 10.0
    assert repr(t) == "tensor([10.,  2.,  3.], dtype=torch.float64)"
    t.add_(1)
    assert a.tolist() == [11.0, 3.0, 4.0]
    assert torch.from_numpy(np.array([1, 2], dtype=np.int32)).dtype == torch.int32


# --- "Writing device-agnostic code" -------------------------------------------------------

# seed: device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
#       # this won't copy if they are already on the desired device
#       input = data.to(device)
def test_to_device_does_not_copy_when_already_there():
    device = torch.device("cpu")
    data = torch.ones(2)
    assert data.to(device) is data
    assert data.to("cpu") is data
    assert data.to(device=device) is data
    assert data.to(torch.float32) is data
    converted = data.to(torch.float64)
    assert converted is not data
    assert repr(converted) == "tensor([1., 1.], dtype=torch.float64)"
