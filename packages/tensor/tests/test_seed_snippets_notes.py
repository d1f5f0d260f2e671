"""Acceptance tests: the PyTorch notes.

Seed: shared/seeds/pytorch-notes-autograd-broadcasting-cuda-extending.txt — section
"2. Broadcasting semantics" in full, and the tensor-only lines of "1. Autograd mechanics"
(creation with requires_grad), "3. CUDA SEMANTICS" (run on the CPU: new_*, *_like,
device-agnostic creation) and "4. EXTENDING PYTORCH" (the tensor math inside the
LinearFunction and MulConstant examples, the inputs of the gradcheck example, the
Linear module's parameter initialisation).

Every expected value below was produced by running the same code with real PyTorch
(2.13, CPU). Error messages are today's wording, which differs from the notes for the
in-place case.
"""
import re

import numpy as np
import pytest

import ember_tensor as torch


# --- 1. Autograd mechanics, "requires_grad" (creation and plain ops only) -----------------

# seed (In [30]): x = torch.randn(5, 5)    # requires_grad=False by default
#                 y = torch.randn(5, 5)    # requires_grad=False by default
#                 z = torch.randn(5, 5, requires_grad=True)
#                 a = x + y
#                 print(a.requires_grad)
# (b = a + z and its requires_grad need ember-autograd)
def test_autograd_requires_grad_flags_at_creation():
    x = torch.randn(5, 5)
    y = torch.randn(5, 5)
    z = torch.randn(5, 5, requires_grad=True)
    assert x.requires_grad is False and y.requires_grad is False
    assert z.requires_grad is True
    a = x + y
    assert a.requires_grad is False
    assert str(a.size()) == "torch.Size([5, 5])"


# --- 2. Broadcasting semantics, "General semantics" --------------------------------------

# seed (In [20]): the four "broadcastable?" examples; (In [26]): the resulting sizes
@pytest.mark.parametrize(
    "x_shape, y_shape, expected_size",
    [
        ((5, 7, 3), (5, 7, 3), "torch.Size([5, 7, 3])"),  # same shapes are always broadcastable
        ((5, 3, 4, 1), (3, 1, 1), "torch.Size([5, 3, 4, 1])"),  # can line up trailing dimensions
        ((5, 1, 4, 1), (3, 1, 1), "torch.Size([5, 3, 4, 1])"),  # In [26], first print
        ((1,), (3, 1, 7), "torch.Size([3, 1, 7])"),  # In [26]: "but not necessary"
    ],
)
def test_broadcastable_shapes(x_shape, y_shape, expected_size):
    x = torch.empty(*x_shape)
    y = torch.empty(*y_shape)
    assert str((x + y).size()) == expected_size
    assert str((y + x).size()) == expected_size


@pytest.mark.parametrize(
    "x_shape, y_shape, message",
    [
        # x=torch.empty(5,2,4,1); y=torch.empty(3,1,1)
        # "x and y are not broadcastable, because in the 3rd trailing dimension 2 != 3"
        ((5, 2, 4, 1), (3, 1, 1),
         "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1"),
        # x=torch.empty((0,)); y=torch.empty(2,2)
        # "x and y are not broadcastable, because x does not have at least 1 dimension"
        # (today a size-0 dimension is simply a size that is not 1)
        ((0,), (2, 2),
         "The size of tensor a (0) must match the size of tensor b (2) at non-singleton dimension 1"),
    ],
)
def test_not_broadcastable_shapes_raise(x_shape, y_shape, message):
    x = torch.empty(x_shape)
    y = torch.empty(y_shape)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        (x + y).size()


def test_broadcast_values_follow_numpy():
    # "the resulting dimension size is the max of the sizes of x and y along that dimension"
    x = torch.tensor([[1.], [2.], [3.]])
    y = torch.tensor([10., 20.])
    assert repr(x + y) == (
        "tensor([[11., 21.],\n"
        "        [12., 22.],\n"
        "        [13., 23.]])"
    )
    # a 0-d tensor broadcasts against anything
    assert repr(torch.tensor(1.) + y) == "tensor([11., 21.])"


# --- 2. Broadcasting semantics, "In-place semantics" -------------------------------------

# seed (In [27]): x=torch.empty(5,3,4,1); y=torch.empty(3,1,1)
#                 print((x.add_(y)).size())
def test_in_place_broadcast_keeps_the_destination_shape():
    x = torch.empty(5, 3, 4, 1)
    y = torch.empty(3, 1, 1)
    result = x.add_(y)
    assert result is x
    assert str(result.size()) == "torch.Size([5, 3, 4, 1])"


def test_in_place_broadcast_values():
    x = torch.zeros(2, 3)
    x.add_(torch.tensor([1., 2., 3.]))
    assert repr(x) == "tensor([[1., 2., 3.],\n        [1., 2., 3.]])"
    x += torch.tensor([[10.], [20.]])
    assert repr(x) == "tensor([[11., 12., 13.],\n        [21., 22., 23.]])"


# seed (In [27]): x=torch.empty(1,3,1); y=torch.empty(3,1,7)
#                 #(x.add_(y)).size()
#                 # RuntimeError: The expanded size of the tensor (1) must match the existing
#                 # size (7) at non-singleton dimension 2.
# (today's PyTorch reports the in-place case as below; the "expanded size" wording now
#  belongs to expand(), tested next)
def test_in_place_broadcast_cannot_grow_the_destination():
    x = torch.empty(1, 3, 1)
    y = torch.empty(3, 1, 7)
    with pytest.raises(RuntimeError, match=re.escape(
            "output with shape [1, 3, 1] doesn't match the broadcast shape [3, 3, 7]")):
        x.add_(y)
    with pytest.raises(RuntimeError, match=re.escape(
            "output with shape [5, 3, 4, 1] doesn't match the broadcast shape [5, 3, 4, 2]")):
        torch.empty(5, 3, 4, 1).add_(torch.empty(5, 3, 1, 2))
    # shapes that do not broadcast at all give the out-of-place message
    with pytest.raises(RuntimeError, match=re.escape(
            "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1")):
        torch.empty(5, 2, 4, 1).add_(torch.empty(3, 1, 1))


def test_expand_to_a_smaller_size_raises():
    message = (
        "The expanded size of the tensor (1) must match the existing size (3) at "
        "non-singleton dimension 0.  Target sizes: [1, 3, 7].  Tensor sizes: [3, 1, 7]"
    )
    with pytest.raises(RuntimeError, match=re.escape(message)):
        torch.empty(3, 1, 7).expand(1, 3, 7)
    with pytest.raises(RuntimeError, match=re.escape(message)):
        torch.empty(3, 1, 7).expand_as(torch.empty(1, 3, 7))


# --- 2. Broadcasting semantics, "Backwards compatibility" --------------------------------

# seed (In [28]): torch.add(torch.ones(4,1), torch.randn(4))
#   "would previously produce a Tensor with size: torch.Size([4,1]), but now produces a
#    Tensor with size: torch.Size([4,4])."
def test_backcompat_add_broadcasts_to_4x4():
    r = torch.randn(4)
    out = torch.add(torch.ones(4, 1), r)
    assert str(out.size()) == "torch.Size([4, 4])"
    expected = np.broadcast_to(1 + r.numpy(), (4, 4))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


# seed (In [29]): torch.utils.backcompat.broadcast_warning.enabled=True
#                 torch.add(torch.ones(4,1), torch.ones(4))
# (torch.utils.backcompat is ember_tensor.backcompat)
def test_backcompat_add_ones():
    from ember_tensor import backcompat

    backcompat.broadcast_warning.enabled = True
    try:
        with pytest.warns(UserWarning, match="self and other do not have the same shape, but are broadcastable"):
            result = torch.add(torch.ones(4, 1), torch.ones(4))
    finally:
        backcompat.broadcast_warning.enabled = False
    assert repr(result) == (
        "tensor([[2., 2., 2., 2.],\n"
        "        [2., 2., 2., 2.],\n"
        "        [2., 2., 2., 2.],\n"
        "        [2., 2., 2., 2.]])"
    )


# --- 3. CUDA semantics, run on the CPU -----------------------------------------------------

# seed (In [51]): x = torch.empty((8, 42), device=args.device)   (args.device = cpu)
def test_device_agnostic_empty():
    device = torch.device("cpu")
    x = torch.empty((8, 42), device=device)
    assert str(x.size()) == "torch.Size([8, 42])"
    assert x.device == device


# seed (In [54]): x_cpu = torch.empty(2)
#                 x_cpu_long = torch.empty(2, dtype=torch.int64)
#                 y_cpu = x_cpu.new_full([3, 2], fill_value=0.3)
#                 y_cpu_long = x_cpu_long.new_tensor([[1, 2, 3]])
#                 (and y_gpu = x_gpu.new_full([3, 2], fill_value=-5), here on the CPU)
def test_new_full_and_new_tensor(capsys):
    x_cpu = torch.empty(2)
    x_cpu_long = torch.empty(2, dtype=torch.int64)

    y_cpu = x_cpu.new_full([3, 2], fill_value=0.3)
    print(y_cpu)
    y_neg = x_cpu.new_full([3, 2], fill_value=-5)
    print(y_neg)
    y_cpu_long = x_cpu_long.new_tensor([[1, 2, 3]])
    print(y_cpu_long)

    assert capsys.readouterr().out == (
        "tensor([[0.3000, 0.3000],\n"
        "        [0.3000, 0.3000],\n"
        "        [0.3000, 0.3000]])\n"
        "tensor([[-5., -5.],\n"
        "        [-5., -5.],\n"
        "        [-5., -5.]])\n"
        "tensor([[1, 2, 3]])\n"
    )
    assert repr(x_cpu_long.new_full([2], fill_value=7)) == "tensor([7, 7])"


# seed (In [55]): x_cpu = torch.empty(2, 3)
#                 y_cpu = torch.ones_like(x_cpu)
#                 y_gpu = torch.zeros_like(x_gpu)
def test_ones_like_and_zeros_like():
    x_cpu = torch.empty(2, 3)
    assert repr(torch.ones_like(x_cpu)) == "tensor([[1., 1., 1.],\n        [1., 1., 1.]])"
    assert repr(torch.zeros_like(x_cpu)) == "tensor([[0., 0., 0.],\n        [0., 0., 0.]])"


# seed (In [49], "CUDA streams"): A = torch.empty((100, 100), device=cuda).normal_(0.0, 1.0)
#                                 B = torch.sum(A)
def test_normal_then_sum():
    A = torch.empty((100, 100)).normal_(0.0, 1.0)
    assert A.dtype == torch.float32 and str(A.shape) == "torch.Size([100, 100])"
    assert abs(A.mean().item()) < 0.1
    assert abs(A.std().item() - 1.0) < 0.1
    B = torch.sum(A)
    assert B.dim() == 0 and B.dtype == torch.float32


# --- 4. Extending PyTorch: the tensor math of the examples --------------------------------

# seed (In [8], LinearFunction.forward):
#   output = input.mm(weight.t())
#   if bias is not None:
#       output += bias.unsqueeze(0).expand_as(output)
def test_linear_function_forward_math():
    input = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
    weight = torch.tensor([[1., 0., -1.], [0.5, 0.5, 0.5]])
    bias = torch.tensor([10., 20.])
    output = input.mm(weight.t())
    assert repr(output) == "tensor([[-2.0000,  3.0000],\n        [-2.0000,  7.5000]])"
    output += bias.unsqueeze(0).expand_as(output)
    assert repr(output) == "tensor([[ 8.0000, 23.0000],\n        [ 8.0000, 27.5000]])"


# seed (In [8], LinearFunction.backward, run on plain tensors):
#   grad_input = grad_output.mm(weight)
#   grad_weight = grad_output.t().mm(input)
#   grad_bias = grad_output.sum(0).squeeze(0)
def test_linear_function_backward_math():
    input = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
    weight = torch.tensor([[1., 0., -1.], [0.5, 0.5, 0.5]])
    grad_output = torch.ones(2, 2)
    assert repr(grad_output.mm(weight)) == (
        "tensor([[ 1.5000,  0.5000, -0.5000],\n"
        "        [ 1.5000,  0.5000, -0.5000]])"
    )
    assert repr(grad_output.t().mm(input)) == "tensor([[5., 7., 9.],\n        [5., 7., 9.]])"
    assert repr(grad_output.sum(0).squeeze(0)) == "tensor([2., 2.])"


# seed (In [10], MulConstant): return tensor * constant / grad_output * ctx.constant
def test_mul_constant_math():
    assert repr(torch.tensor([1., 2.]) * 3) == "tensor([3., 6.])"
    assert repr(torch.tensor([1., 2.]) * 0.5) == "tensor([0.5000, 1.0000])"


# seed (In [12]): input = (torch.randn(20,20,dtype=torch.double,requires_grad=True),
#                          torch.randn(30,20,dtype=torch.double,requires_grad=True))
def test_gradcheck_inputs():
    inputs = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
              torch.randn(30, 20, dtype=torch.double, requires_grad=True))
    assert [str(t.shape) for t in inputs] == ["torch.Size([20, 20])", "torch.Size([30, 20])"]
    assert all(t.dtype == torch.float64 and t.requires_grad for t in inputs)


# seed (In [13], Linear.__init__): torch.Tensor(output_features, input_features)
#                                  self.weight.data.uniform_(-0.1, 0.1)
def test_linear_module_weight_init():
    weight = torch.Tensor(3, 4)
    assert weight.dtype == torch.float32 and str(weight.shape) == "torch.Size([3, 4])"
    assert weight.uniform_(-0.1, 0.1) is weight
    values = weight.numpy()
    assert ((values >= -0.1) & (values <= 0.1)).all()
    assert torch.Tensor(3).shape == (3,)
