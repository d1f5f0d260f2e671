"""Acceptance tests: the 0.2 release notes and the alpha-1 notes.

Seeds: shared/seeds/pytorch-0.2-release-notes.txt — "Tensor Broadcasting (numpy-style)",
the tensor creation lines of "Advanced Indexing" (indexing with lists/tensors is a later
package's work: only integer indexing is used here), the tensor math inside the
higher-order-gradients and distributed examples, "New in torch and autograd",
"Bug-fixes and small improvements" and "Important Breakages and Workarounds";
shared/seeds/pytorch-alpha-1-notes.txt — "Tensor operators".

Every expected value below was produced by running the same code with real PyTorch
(2.13, CPU). Old outputs printed as "[torch.FloatTensor of size 4]" are asserted in
today's form.
"""
import re

import pytest

import ember_tensor as torch


# --- "Tensor Broadcasting (numpy-style)" ---------------------------------------------------

# seed: >>> x=torch.FloatTensor(5,7,3)
#       >>> y=torch.FloatTensor(5,7,3)
#       >>> x=torch.FloatTensor(5,3,4,1)
#       >>> y=torch.FloatTensor(  3,1,1)
#       >>> x=torch.FloatTensor(5,1,4,1)
#       >>> (x+y).size()
#       torch.Size([5, 3, 4, 1])
@pytest.mark.parametrize(
    "x_shape, y_shape, expected_size",
    [
        ((5, 7, 3), (5, 7, 3), "torch.Size([5, 7, 3])"),
        ((5, 3, 4, 1), (3, 1, 1), "torch.Size([5, 3, 4, 1])"),
        ((5, 1, 4, 1), (3, 1, 1), "torch.Size([5, 3, 4, 1])"),
    ],
)
def test_broadcasting_with_legacy_float_tensors(x_shape, y_shape, expected_size):
    x = torch.FloatTensor(*x_shape)
    y = torch.FloatTensor(*y_shape)
    assert x.type() == "torch.FloatTensor"
    assert str(x.size()) == f"torch.Size({list(x_shape)})"
    assert str((x + y).size()) == expected_size


# seed: # error case
#       >>> x=torch.FloatTensor(5,2,4,1)
#       >>> y=torch.FloatTensor(  3,1,1)
#       >>> (x+y).size()
#       RuntimeError: The size of tensor a (2) must match the size of tensor b (3) at
#       non-singleton dimension 1
def test_broadcasting_error_case():
    x = torch.FloatTensor(5, 2, 4, 1)
    y = torch.FloatTensor(3, 1, 1)
    with pytest.raises(RuntimeError, match=re.escape(
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1")):
        (x + y).size()


# --- "Advanced Indexing" (creation and plain integer indexing only) ------------------------

# seed: x = torch.Tensor(5, 5, 5)
#       --> yields a 2-element Tensor (x[1][3][1], x[2][2][0])
#       y = torch.LongTensor([0, 2, 4])
def test_legacy_constructors_from_indexing_section():
    x = torch.Tensor(5, 5, 5)
    assert x.type() == "torch.FloatTensor"
    assert str(x.size()) == "torch.Size([5, 5, 5])"
    x.copy_(torch.arange(125.0).view(5, 5, 5))  # Tensor(5, 5, 5) is uninitialised: it may hold NaNs
    element = x[1][3][1]
    assert element.dim() == 0
    assert torch.equal(element, x[1, 3, 1]) and element.item() == 41.0
    y = torch.LongTensor([0, 2, 4])
    assert repr(y) == "tensor([0, 2, 4])"
    assert y.type() == "torch.LongTensor"


def test_legacy_tensor_constructor_from_size_or_data():
    # from the brief's list and the distributed section: torch.Tensor(10) is a size,
    # torch.Tensor([0]) is data
    assert str(torch.Tensor(5, 7, 3).size()) == "torch.Size([5, 7, 3])"
    assert torch.Tensor(5, 7, 3).dtype == torch.float32
    assert str(torch.Tensor(10).size()) == "torch.Size([10])"
    assert repr(torch.Tensor([0])) == "tensor([0.])"
    assert repr(torch.Tensor([[1, 2], [3, 4]])) == "tensor([[1., 2.],\n        [3., 4.]])"


# --- "Higher order gradients" example (its tensor math) -----------------------------------

# seed: input = Variable(torch.randn(2,3,224,224).cuda(), requires_grad=True)
#       target = Variable(torch.zeros(2).long().cuda())
def test_example_inputs():
    input = torch.randn(2, 3, 224, 224, requires_grad=True)
    assert str(input.shape) == "torch.Size([2, 3, 224, 224])"
    assert input.requires_grad is True
    target = torch.zeros(2).long()
    assert repr(target) == "tensor([0, 0])"


# seed: grad_norm = 0
#       for grad in grad_params:
#           grad_norm += grad.pow(2).sum()
#       grad_norm = grad_norm.sqrt()
def test_gradient_norm_accumulation():
    grad_params = (torch.tensor([3., 4.]), torch.tensor([[12.]]))
    grad_norm = 0
    for grad in grad_params:
        grad_norm += grad.pow(2).sum()
    assert repr(grad_norm) == "tensor(169.)"
    grad_norm = grad_norm.sqrt()
    assert repr(grad_norm) == "tensor(13.)"


# seed ("New features", retain_grad example): input = Variable(torch.rand(1, 3), ...)
#       h1 = input * 3
#       out = (h1 * h1).sum()
def test_retain_grad_example_forward():
    assert str(torch.rand(1, 3).shape) == "torch.Size([1, 3])"
    input = torch.tensor([[1., 2., 3.]])
    h1 = input * 3
    assert repr(h1) == "tensor([[3., 6., 9.]])"
    out = (h1 * h1).sum()
    assert repr(out) == "tensor(126.)"


# --- "Distributed PyTorch" (the tensors of the examples) ----------------------------------

# seed: x = torch.Tensor(10)
#       x = torch.Tensor([dist.get_rank()])
def test_distributed_example_tensors():
    assert str(torch.Tensor(10).shape) == "torch.Size([10])"
    rank = 0
    assert repr(torch.Tensor([rank])) == "tensor([0.])"


# --- "New in torch and autograd" -----------------------------------------------------------

# seed: "All reduce functions such as sum and mean now default to squeezing the reduced
#        dimension. For example torch.sum(torch.randn(10, 20), 0) returns a 1D Tensor."
def test_reductions_squeeze_the_reduced_dimension():
    assert str(torch.sum(torch.randn(10, 20), 0).shape) == "torch.Size([20])"
    assert str(torch.randn(10, 20).mean(1).shape) == "torch.Size([10])"
    assert repr(torch.ones(2, 3).sum(0)) == "tensor([2., 2., 2.])"
    assert repr(torch.ones(2, 3).mean()) == "tensor(1.)"


@pytest.mark.parametrize(
    "compute, expected_repr",
    [
        (lambda: torch.ones(3).sum(), "tensor(3.)"),
        (lambda: torch.tensor([1, 2, 3]).sum(), "tensor(6)"),
        # sums of small ints and bools are int64
        (lambda: torch.tensor([1, 2, 3], dtype=torch.int32).sum().dtype, "torch.int64"),
        (lambda: torch.tensor([True, True]).sum(), "tensor(2)"),
        (lambda: torch.tensor([1., 5., 3.]).max(), "tensor(5.)"),
        (lambda: torch.tensor([[1., 2.], [3., 4.]]).prod(), "tensor(24.)"),
    ],
)
def test_full_reductions(compute, expected_repr):
    assert repr(compute()) == expected_repr


# seed: "x.shape, similar to numpy. A convenience property that is equivalent to x.size()"
def test_shape_property():
    x = torch.ones(2, 3)
    assert x.shape == x.size()
    assert str(x.shape) == "torch.Size([2, 3])"
    assert type(x.shape) is torch.Size
    assert x.shape == (2, 3)
    assert x.shape[1] == 3


# seed: "torch.matmul, similar to np.matmul"
def test_matmul():
    a = torch.tensor([[1., 2.], [3., 4.]])
    b = torch.tensor([[5., 6.], [7., 8.]])
    assert repr(torch.matmul(a, b)) == "tensor([[19., 22.],\n        [43., 50.]])"
    assert repr(torch.matmul(a, torch.tensor([1., 1.]))) == "tensor([3., 7.])"


# seed: "bitwise and, or, xor, lshift, rshift"
@pytest.mark.parametrize(
    "compute, expected_repr",
    [
        (lambda: torch.tensor([12, 10]) & torch.tensor([10, 6]), "tensor([8, 2])"),
        (lambda: torch.tensor([12, 10]) | torch.tensor([10, 6]), "tensor([14, 14])"),
        (lambda: torch.tensor([12, 10]) ^ torch.tensor([10, 6]), "tensor([ 6, 12])"),
        (lambda: torch.tensor([1, 2]) << 2, "tensor([4, 8])"),
        (lambda: torch.tensor([16, 8]) >> 2, "tensor([4, 2])"),
    ],
)
def test_bitwise_operators(compute, expected_repr):
    assert repr(compute()) == expected_repr


# seed: "unbiased var and std now available via keyword argument option"
def test_var_and_std_unbiased_keyword():
    x = torch.tensor([1., 2., 3., 4.])
    assert repr(x.var()) == "tensor(1.6667)"
    assert repr(x.var(unbiased=False)) == "tensor(1.2500)"
    assert repr(x.std()) == "tensor(1.2910)"
    assert repr(x.std(unbiased=False)) == "tensor(1.1180)"


# seed: "torch.median behaves similar to torch.sum when no arguments are given, i.e. it
#        reduces all the dimensions and returns a single median value of the flattened
#        Tensor."
def test_median_without_arguments():
    assert repr(torch.tensor([[3., 1., 2.], [6., 5., 4.]]).median()) == "tensor(3.)"
    # an even count gives the lower of the two middle values
    assert repr(torch.tensor([4, 1, 3, 2]).median()) == "tensor(2)"


# seed: "torch.manual_seed now seeds all CUDA devices as well" and "You can now specify the
#        random number generator object via keyword arguments torch.rand(1000,
#        generator=gen)"
def test_manual_seed_and_generator_keyword():
    torch.manual_seed(0)
    a = torch.rand(3)
    torch.manual_seed(0)
    b = torch.rand(3)
    assert torch.equal(a, b)

    gen = torch.Generator()
    assert gen.manual_seed(1) is gen
    first = torch.rand(1000, generator=gen)
    assert str(first.shape) == "torch.Size([1000])"
    gen.manual_seed(1)
    assert torch.equal(torch.rand(1000, generator=gen), first)


# --- "Bug-fixes and small improvements" ----------------------------------------------------

# seed: "Now we emit an error when a Variable is converted to a bool. For example:
#        b = Variable(torch.zeros(1))
#        if b[0]: # errors now"
# (today a one-element tensor converts; only a many-element one is ambiguous)
def test_tensor_to_bool():
    b = torch.zeros(1)
    assert repr(b[0]) == "tensor(0.)"
    assert bool(b[0]) is False
    assert bool(torch.ones(1)) is True
    with pytest.raises(RuntimeError, match=re.escape(
            "Boolean value of Tensor with more than one value is ambiguous")):
        bool(torch.zeros(2))


# seed: "Fix in-place division for Python3"
def test_in_place_true_division():
    x = torch.tensor([1., 2., 3.])
    x /= 2
    assert repr(x) == "tensor([0.5000, 1.0000, 1.5000])"
    assert repr(torch.tensor([1, 2, 3]) / 2) == "tensor([0.5000, 1.0000, 1.5000])"


# seed: "Raise error when call from_numpy on 0-dim array" (today a 0-dim array becomes a
#        0-d tensor)
def test_from_numpy_on_a_zero_dim_array():
    import numpy as np

    assert repr(torch.from_numpy(np.array(3.0))) == "tensor(3., dtype=torch.float64)"


# --- "Important Breakages and Workarounds" -------------------------------------------------

# seed: >>> torch.add(torch.ones(4), torch.ones(2,2))
#       __main__:1: UserWarning: self and other not broadcastable, but have the same
#       number of elements.  Falling back to deprecated pointwise behavior.
# (the deprecated fallback is gone: today this is a broadcasting error)
def test_same_numel_but_not_broadcastable_is_an_error():
    with pytest.raises(RuntimeError, match=re.escape(
            "The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 1")):
        torch.add(torch.ones(4), torch.ones(2, 2))


# seed: >>> torch.add(torch.ones(4,1), torch.randn(4))
#       "would previously produce a Tensor with size: torch.Size([4,1]), but now produces
#        a Tensor with size: torch.Size([4,4])."
#       >>> torch.add(torch.ones(4,1), torch.ones(4))
def test_broadcasting_where_it_did_not_happen_before():
    assert str(torch.add(torch.ones(4, 1), torch.randn(4)).size()) == "torch.Size([4, 4])"
    assert repr(torch.add(torch.ones(4, 1), torch.ones(4))) == (
        "tensor([[2., 2., 2., 2.],\n"
        "        [2., 2., 2., 2.],\n"
        "        [2., 2., 2., 2.],\n"
        "        [2., 2., 2., 2.]])"
    )


# seed: >>> torch.sum(torch.ones(2,3), 1)
#       [torch.FloatTensor of size 2]
def test_keepdim_defaults_to_false():
    assert repr(torch.sum(torch.ones(2, 3), 1)) == "tensor([3., 3.])"


# seed: # behavior with (old) keepdim=True, causes accidental broadcast
#       >>> torch.add(torch.ones(4), torch.ones(4,4).sum(dim=1, keepdim=True))
#       # new behavior with keepdim=False is equivalent to non-broadcasted result
#       >>> torch.add(torch.ones(4), torch.ones(4,4).sum(dim=1, keepdim=False))
def test_keepdim_true_causes_accidental_broadcast():
    kept = torch.ones(4, 4).sum(dim=1, keepdim=True)
    assert str(kept.size()) == "torch.Size([4, 1])"
    assert repr(torch.add(torch.ones(4), kept)) == (
        "tensor([[5., 5., 5., 5.],\n"
        "        [5., 5., 5., 5.],\n"
        "        [5., 5., 5., 5.],\n"
        "        [5., 5., 5., 5.]])"
    )
    squeezed = torch.ones(4, 4).sum(dim=1, keepdim=False)
    assert repr(torch.add(torch.ones(4), squeezed)) == "tensor([5., 5., 5., 5.])"


# --- alpha-1 notes, "Tensor operators" -----------------------------------------------------

# seed: "we've added support for @ operator for matrix multiplication, and changes the * to
#        elementwise multiplication."
def test_matmul_operator_and_elementwise_star():
    a = torch.tensor([[1., 2.], [3., 4.]])
    b = torch.tensor([[5., 6.], [7., 8.]])
    assert repr(a @ b) == "tensor([[19., 22.],\n        [43., 50.]])"
    assert repr(a * b) == "tensor([[ 5., 12.],\n        [21., 32.]])"
