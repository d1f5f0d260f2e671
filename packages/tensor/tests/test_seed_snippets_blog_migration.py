"""Acceptance tests: the PyTorch 0.4.0 migration guide, first half.

Seed: shared/seeds/pytorch-blog-feed-2017-2018.txt, post "PyTorch 0.4.0 Migration Guide"
(sections "Merging Tensor and Variable", "Manipulating requires_grad flag" as far as it
is a creation keyword, "Support for 0-dimensional (scalar) Tensors", "Accumulating
losses", and the "Code Samples" at the end), plus the `x.split(1)` loop from the post
"The road to 1.0".

Every expected value below was produced by running the same code with real PyTorch
(2.13, CPU). Where the seed shows a 2018 output that PyTorch no longer prints (e.g.
`tensor([ 2., 3., 4., 5.])` for `torch.arange(2, 6)`), the test asserts today's output.
Snippets needing autograd (backward, .grad, detach, no_grad, requires_grad propagation)
belong to ember-autograd and are left out here.
"""
import re

import pytest

import ember_tensor as torch


# --- "The type() of a Tensor has changed" -----------------------------------------------

# seed: >>> x = torch.DoubleTensor([1, 1, 1])
#       >>> print(type(x)) # was torch.DoubleTensor
#       >>> print(x.type()) # OK: 'torch.DoubleTensor'
#       >>> print(isinstance(x, torch.DoubleTensor)) # OK: True
def test_type_of_tensor_changed_double_tensor():
    x = torch.DoubleTensor([1, 1, 1])
    assert type(x) is torch.Tensor
    assert x.type() == "torch.DoubleTensor"
    assert isinstance(x, torch.DoubleTensor)
    assert isinstance(x, torch.Tensor)
    assert not isinstance(x, torch.FloatTensor)
    assert x.dtype == torch.float64
    assert repr(x) == "tensor([1., 1., 1.], dtype=torch.float64)"


# --- "When does autograd start tracking history now?" (creation-only part) --------------

# seed: >>> x = torch.ones(1) # create a tensor with requires_grad=False (default)
#       >>> x.requires_grad
#       >>> y = torch.ones(1)
#       >>> z = x + y
#       >>> z.requires_grad
def test_requires_grad_defaults_to_false():
    x = torch.ones(1)
    assert x.requires_grad is False
    y = torch.ones(1)
    z = x + y
    assert z.requires_grad is False
    assert repr(z) == "tensor([2.])"


# seed: >>> w = torch.ones(1, requires_grad=True)
#       >>> w.requires_grad
def test_requires_grad_creation_keyword_ones():
    w = torch.ones(1, requires_grad=True)
    assert w.requires_grad is True
    assert repr(w) == "tensor([1.], requires_grad=True)"


# seed ("Manipulating requires_grad flag"):
#       >>> my_tensor = torch.zeros(3, 4, requires_grad=True)
#       >>> my_tensor.requires_grad
def test_requires_grad_creation_keyword_zeros():
    my_tensor = torch.zeros(3, 4, requires_grad=True)
    assert my_tensor.requires_grad is True
    assert repr(my_tensor) == (
        "tensor([[0., 0., 0., 0.],\n"
        "        [0., 0., 0., 0.],\n"
        "        [0., 0., 0., 0.]], requires_grad=True)"
    )


# --- "What about .data?" (the tensor math of the example, without autograd) -------------

# seed: >>> a = torch.tensor([1,2,3.], requires_grad = True)
#       >>> out = a.sigmoid()
#       >>> c = out.detach()
#       >>> c.zero_()
#       tensor([ 0., 0., 0.])
# (run on a plain tensor: detach/.data are ember-autograd's; zero_ returns self)
def test_sigmoid_then_in_place_zero():
    a = torch.tensor([1, 2, 3.])
    out = a.sigmoid()
    assert repr(out) == "tensor([0.7311, 0.8808, 0.9526])"
    c = out.zero_()
    assert c is out
    assert repr(c) == "tensor([0., 0., 0.])"
    assert repr(out) == "tensor([0., 0., 0.])"


# --- "Support for 0-dimensional (scalar) Tensors" ----------------------------------------

# seed: >>> torch.tensor(3.1416) # create a scalar directly
#       tensor(3.1416)
#       >>> torch.tensor(3.1416).size() # scalar is 0-dimensional
#       torch.Size([])
#       >>> torch.tensor([3]).size() # compare to a vector of size 1
#       torch.Size([1])
def test_scalar_tensor_is_zero_dimensional():
    s = torch.tensor(3.1416)
    assert repr(s) == "tensor(3.1416)"
    assert str(s.size()) == "torch.Size([])"
    assert s.dim() == 0
    assert s.size() == ()
    v = torch.tensor([3])
    assert str(v.size()) == "torch.Size([1])"
    assert v.dim() == 1


# seed: >>> vector = torch.arange(2, 6) # this is a vector
#       >>> vector
#       >>> vector.size()
#       >>> vector[3] # indexing into a vector gives a scalar
#       >>> vector[3].item() # .item() gives the value as a Python number
# (the seed shows 0.4's float output; arange of ints is int64 today)
def test_indexing_a_vector_gives_a_scalar():
    vector = torch.arange(2, 6)
    assert repr(vector) == "tensor([2, 3, 4, 5])"
    assert vector.dtype == torch.int64
    assert str(vector.size()) == "torch.Size([4])"
    element = vector[3]
    assert repr(element) == "tensor(5)"
    assert str(element.size()) == "torch.Size([])"
    value = element.item()
    assert value == 5 and type(value) is int


# seed: >>> mysum = torch.tensor([2, 3]).sum()
#       >>> mysum
#       tensor(5)
#       >>> mysum.size()
#       torch.Size([])
def test_sum_returns_a_zero_dimensional_tensor():
    mysum = torch.tensor([2, 3]).sum()
    assert repr(mysum) == "tensor(5)"
    assert str(mysum.size()) == "torch.Size([])"


@pytest.mark.parametrize(
    "make, expected, py_type",
    [
        (lambda: torch.tensor(3), 3, int),
        (lambda: torch.tensor(2.5), 2.5, float),
        (lambda: torch.tensor(True), True, bool),
        (lambda: torch.tensor([7.0]), 7.0, float),  # one element, not 0-d: still allowed
    ],
)
def test_item_gives_a_python_number(make, expected, py_type):
    # seed: "Use loss.item() to get the Python number from a scalar."
    value = make().item()
    assert value == expected and type(value) is py_type


# --- "Accumulating losses" ---------------------------------------------------------------

# seed: "Consider the widely used pattern total_loss += loss.data[0] ... in 0.4.0 loss is
#        now a scalar and has 0 dimensions. Indexing into a scalar doesn't make sense (it
#        gives a warning now, but will be a hard error in 0.5.0)."
def test_indexing_a_zero_dimensional_tensor_is_an_error():
    loss = torch.tensor(5.0)
    msg = (
        "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
        "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
    )
    with pytest.raises(IndexError, match=re.escape(msg)):
        loss[0]
    # what still works on a 0-d tensor: the empty index and the ellipsis
    assert repr(loss[()]) == "tensor(5.)"
    assert repr(loss[...]) == "tensor(5.)"


# seed: "total_loss += loss.item() # get Python number from 1-element Tensor"
#       and "if you don't convert to a Python number ... The total loss is thus
#       accumulating Tensors"
def test_accumulating_losses():
    losses = [torch.tensor(0.5), torch.tensor(0.25)]
    total_loss = 0
    for loss in losses:
        total_loss += loss.item()
    assert total_loss == 0.75 and type(total_loss) is float

    total_tensor = 0
    for loss in losses:
        total_tensor += loss
    assert isinstance(total_tensor, torch.Tensor)
    assert repr(total_tensor) == "tensor(0.7500)"


# --- "Code Samples (Putting it all together)", 0.4.0 (new) -------------------------------

# seed: device = torch.device("cuda" if use_cuda else "cpu")
#       input, target = input.to(device), target.to(device)
#       hidden = input.new_zeros(*h_shape) # has the same device & dtype as `input`
# (use_cuda = False: CUDA is out of scope for these tests)
def test_code_sample_new_zeros_hidden_state():
    device = torch.device("cpu")
    h_shape = (1, 2, 4)
    input = torch.randn(2, 3, dtype=torch.float64).to(device)
    hidden = input.new_zeros(*h_shape)
    assert hidden.dtype == torch.float64
    assert hidden.device == device
    assert repr(hidden) == (
        "tensor([[[0., 0., 0., 0.],\n"
        "         [0., 0., 0., 0.]]], dtype=torch.float64)"
    )
    # the 0.3.1 form of the same line, minus the Variable wrapper
    assert str(torch.zeros(*h_shape).shape) == "torch.Size([1, 2, 4])"


# --- post "The road to 1.0", "Script Mode" ------------------------------------------------

# seed: for x_t in x.split(1):
def test_split_into_steps():
    x = torch.arange(3.0)
    steps = x.split(1)
    assert isinstance(steps, tuple)
    assert repr(steps) == "(tensor([0.]), tensor([1.]), tensor([2.]))"
    assert repr(torch.arange(5).split(2)) == "(tensor([0, 1]), tensor([2, 3]), tensor([4]))"
