"""Acceptance tests: the slides "a framework for next-generation ML research".

Seed: shared/seeds/pytorch-slides-next-generation-ml-research.txt — the "NdArray library"
part (the operator tour, pretty-printing, the NumPy bridge, from_numpy of an image), the
tensor math of the eager training-loop and model slides, the data-dependent control-flow
slide, the MNIST dataset slide and the jacobi_solve of "Easy C++ extensions". CUDA lines
and everything needing autograd, nn or optim are left out.

Snippets built on uninitialised (torch.empty) or random data are asserted by shape and
dtype; each is paired with a deterministic twin whose exact output is asserted. Every
expected value below was produced by running the same code with real PyTorch (2.13, CPU).
"""
import numpy as np
import pytest

import ember_tensor as torch


# --- "NdArray library": the operator tour -----------------------------------------------

# seed: x = torch.empty(5, 5)          # Tensor creation
#       y = x + x                      # Regular Python operators are supported
#       s = x[..., -1:]                # Full basic + a large part of NumPy advanced indexing
#       b = x + x[:, -1:]              # Broadcasting (operands are of different shapes)
#       z = x.sigmoid()                # A ton of math functions as methods (+ chaining!)
#       q = torch.abs(x)               # Functional syntax
#       x.uniform_()                   # In-place modification
#       i = x.long()                   # Type casting
#       print(x)                       # Pretty-printing
def test_ndarray_tour_as_written(capsys):
    x = torch.empty(5, 5)
    y = x + x
    s = x[..., -1:]
    b = x + x[:, -1:]
    z = x.sigmoid()
    q = torch.abs(x)
    assert [str(t.shape) for t in (y, s, b, z, q)] == [
        "torch.Size([5, 5])", "torch.Size([5, 1])", "torch.Size([5, 5])",
        "torch.Size([5, 5])", "torch.Size([5, 5])",
    ]
    assert x.uniform_() is x
    values = x.numpy()
    assert ((values >= 0) & (values < 1)).all()
    i = x.long()
    assert i.dtype == torch.int64
    assert repr(i) == (
        "tensor([[0, 0, 0, 0, 0],\n"
        "        [0, 0, 0, 0, 0],\n"
        "        [0, 0, 0, 0, 0],\n"
        "        [0, 0, 0, 0, 0],\n"
        "        [0, 0, 0, 0, 0]])"
    )
    print(x)
    printed = capsys.readouterr().out
    assert printed == str(x) + "\n"
    assert printed.startswith("tensor([[") and printed.endswith("]])\n")


# The same tour on known values: x = torch.arange(25.).view(5, 5) / 10 - 1
TOUR_X = (
    "tensor([[-1.0000, -0.9000, -0.8000, -0.7000, -0.6000],\n"
    "        [-0.5000, -0.4000, -0.3000, -0.2000, -0.1000],\n"
    "        [ 0.0000,  0.1000,  0.2000,  0.3000,  0.4000],\n"
    "        [ 0.5000,  0.6000,  0.7000,  0.8000,  0.9000],\n"
    "        [ 1.0000,  1.1000,  1.2000,  1.3000,  1.4000]])"
)


@pytest.mark.parametrize(
    "step, expected_repr",
    [
        (lambda x: x, TOUR_X),
        (lambda x: x + x,
         "tensor([[-2.0000, -1.8000, -1.6000, -1.4000, -1.2000],\n"
         "        [-1.0000, -0.8000, -0.6000, -0.4000, -0.2000],\n"
         "        [ 0.0000,  0.2000,  0.4000,  0.6000,  0.8000],\n"
         "        [ 1.0000,  1.2000,  1.4000,  1.6000,  1.8000],\n"
         "        [ 2.0000,  2.2000,  2.4000,  2.6000,  2.8000]])"),
        (lambda x: x[..., -1:],
         "tensor([[-0.6000],\n"
         "        [-0.1000],\n"
         "        [ 0.4000],\n"
         "        [ 0.9000],\n"
         "        [ 1.4000]])"),
        (lambda x: x + x[:, -1:],
         "tensor([[-1.6000, -1.5000, -1.4000, -1.3000, -1.2000],\n"
         "        [-0.6000, -0.5000, -0.4000, -0.3000, -0.2000],\n"
         "        [ 0.4000,  0.5000,  0.6000,  0.7000,  0.8000],\n"
         "        [ 1.4000,  1.5000,  1.6000,  1.7000,  1.8000],\n"
         "        [ 2.4000,  2.5000,  2.6000,  2.7000,  2.8000]])"),
        (lambda x: x.sigmoid(),
         "tensor([[0.2689, 0.2891, 0.3100, 0.3318, 0.3543],\n"
         "        [0.3775, 0.4013, 0.4256, 0.4502, 0.4750],\n"
         "        [0.5000, 0.5250, 0.5498, 0.5744, 0.5987],\n"
         "        [0.6225, 0.6457, 0.6682, 0.6900, 0.7109],\n"
         "        [0.7311, 0.7503, 0.7685, 0.7858, 0.8022]])"),
        (lambda x: torch.abs(x),
         "tensor([[1.0000, 0.9000, 0.8000, 0.7000, 0.6000],\n"
         "        [0.5000, 0.4000, 0.3000, 0.2000, 0.1000],\n"
         "        [0.0000, 0.1000, 0.2000, 0.3000, 0.4000],\n"
         "        [0.5000, 0.6000, 0.7000, 0.8000, 0.9000],\n"
         "        [1.0000, 1.1000, 1.2000, 1.3000, 1.4000]])"),
        # casting truncates toward zero
        (lambda x: x.long(),
         "tensor([[-1,  0,  0,  0,  0],\n"
         "        [ 0,  0,  0,  0,  0],\n"
         "        [ 0,  0,  0,  0,  0],\n"
         "        [ 0,  0,  0,  0,  0],\n"
         "        [ 1,  1,  1,  1,  1]])"),
    ],
)
def test_ndarray_tour_on_known_values(step, expected_repr):
    x = torch.arange(25.).view(5, 5) / 10 - 1
    assert repr(step(x)) == expected_repr


# --- "NdArray library": printing and the NumPy bridge --------------------------------------

# seed: x = torch.ones(5, 5)
#       print(x)
#       arr = x.numpy()
#       print(arr)
#       x += 1
#       print(arr)           # array([[ 2., ...]], dtype=float32)
#       np.add(arr, 1, out=arr)
#       print(x)             # tensor([[3., ...]])
def test_numpy_bridge_shares_memory(capsys):
    x = torch.ones(5, 5)
    print(x)
    assert capsys.readouterr().out == (
        "tensor([[1., 1., 1., 1., 1.],\n"
        "        [1., 1., 1., 1., 1.],\n"
        "        [1., 1., 1., 1., 1.],\n"
        "        [1., 1., 1., 1., 1.],\n"
        "        [1., 1., 1., 1., 1.]])\n"
    )
    arr = x.numpy()
    assert isinstance(arr, np.ndarray)
    assert arr.dtype == np.float32 and arr.shape == (5, 5)
    np.testing.assert_array_equal(arr, np.ones((5, 5), dtype=np.float32))

    x += 1
    np.testing.assert_array_equal(arr, np.full((5, 5), 2, dtype=np.float32))

    np.add(arr, 1, out=arr)
    print(x)
    assert capsys.readouterr().out == (
        "tensor([[3., 3., 3., 3., 3.],\n"
        "        [3., 3., 3., 3., 3.],\n"
        "        [3., 3., 3., 3., 3.],\n"
        "        [3., 3., 3., 3., 3.],\n"
        "        [3., 3., 3., 3., 3.]])\n"
    )


# seed: arr = numpy.asarray(PIL.Image.open('dog.png'))
#       x = torch.from_numpy(arr)
#       print(x)             # a summarised print: "...," rows and columns
# (an image-like uint8 array stands in for dog.png)
def test_from_numpy_image_and_summarised_print():
    arr = (np.arange(32 * 48 * 3) % 256).astype(np.uint8).reshape(32, 48, 3)
    x = torch.from_numpy(arr)
    assert x.dtype == torch.uint8
    assert str(x.shape) == "torch.Size([32, 48, 3])"
    block = "[[{}],\n         [{}],\n         [{}],\n         ...,\n         [{}],\n         [{}],\n         [{}]]"

    def rows(*triples):
        return block.format(*(", ".join(f"{v:3d}" for v in t) for t in triples))

    expected = (
        "tensor(["
        + rows((0, 1, 2), (3, 4, 5), (6, 7, 8), (135, 136, 137), (138, 139, 140), (141, 142, 143))
        + ",\n\n        "
        + rows((144, 145, 146), (147, 148, 149), (150, 151, 152), (23, 24, 25), (26, 27, 28), (29, 30, 31))
        + ",\n\n        "
        + rows((32, 33, 34), (35, 36, 37), (38, 39, 40), (167, 168, 169), (170, 171, 172), (173, 174, 175))
        + ",\n\n        ...,\n\n        "
        + rows((80, 81, 82), (83, 84, 85), (86, 87, 88), (215, 216, 217), (218, 219, 220), (221, 222, 223))
        + ",\n\n        "
        + rows((224, 225, 226), (227, 228, 229), (230, 231, 232), (103, 104, 105), (106, 107, 108), (109, 110, 111))
        + ",\n\n        "
        + rows((112, 113, 114), (115, 116, 117), (118, 119, 120), (247, 248, 249), (250, 251, 252), (253, 254, 255))
        + "], dtype=torch.uint8)"
    )
    assert repr(x) == expected


def test_summarised_print_in_scientific_notation():
    # like the slide's output: a large float tensor whose values span more than three
    # decades prints in scientific notation, with "...," for the elided rows and columns
    x = torch.from_numpy(np.arange(1_000_000, dtype=np.float32).reshape(1000, 1000))
    assert repr(x) == (
        "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 9.9700e+02, 9.9800e+02,\n"
        "         9.9900e+02],\n"
        "        [1.0000e+03, 1.0010e+03, 1.0020e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
        "         1.9990e+03],\n"
        "        [2.0000e+03, 2.0010e+03, 2.0020e+03,  ..., 2.9970e+03, 2.9980e+03,\n"
        "         2.9990e+03],\n"
        "        ...,\n"
        "        [9.9700e+05, 9.9700e+05, 9.9700e+05,  ..., 9.9800e+05, 9.9800e+05,\n"
        "         9.9800e+05],\n"
        "        [9.9800e+05, 9.9800e+05, 9.9800e+05,  ..., 9.9900e+05, 9.9900e+05,\n"
        "         9.9900e+05],\n"
        "        [9.9900e+05, 9.9900e+05, 9.9900e+05,  ..., 1.0000e+06, 1.0000e+06,\n"
        "         1.0000e+06]])"
    )


def test_summarised_print_with_signs_in_float64():
    values = ((np.arange(2000 * 1500, dtype=np.float64) % 997) - 498.5).reshape(2000, 1500) * 1e-3
    values[0, 0] = 1234.5
    x = torch.from_numpy(values)
    assert repr(x) == (
        "tensor([[ 1.2345e+03, -4.9750e-01, -4.9650e-01,  ...,  1.5000e-03,\n"
        "          2.5000e-03,  3.5000e-03],\n"
        "        [ 4.5000e-03,  5.5000e-03,  6.5000e-03,  ..., -4.9250e-01,\n"
        "         -4.9150e-01, -4.9050e-01],\n"
        "        [-4.8950e-01, -4.8850e-01, -4.8750e-01,  ...,  1.0500e-02,\n"
        "          1.1500e-02,  1.2500e-02],\n"
        "        ...,\n"
        "        [ 1.3500e-02,  1.4500e-02,  1.5500e-02,  ..., -4.8350e-01,\n"
        "         -4.8250e-01, -4.8150e-01],\n"
        "        [-4.8050e-01, -4.7950e-01, -4.7850e-01,  ...,  1.9500e-02,\n"
        "          2.0500e-02,  2.1500e-02],\n"
        "        [ 2.2500e-02,  2.3500e-02,  2.4500e-02,  ..., -4.7450e-01,\n"
        "         -4.7350e-01, -4.7250e-01]], dtype=torch.float64)"
    )


# --- eager training loop and model slides (forward tensor math only) ---------------------

# seed: y_pred = x.mm(w1).clamp(min=0).mm(w2)
#       loss = (y_pred - y).pow(2).sum()
#       w1.data -= learning_rate * w1.grad.data     (here: an in-place update of a tensor)
def test_training_loop_forward_math():
    x = torch.tensor([[1., -2.], [3., 4.]])
    w1 = torch.tensor([[1., 2., 3.], [-1., 0., 1.]])
    w2 = torch.tensor([[1.], [2.], [-1.]])
    y = torch.tensor([[1.], [2.]])
    h = x.mm(w1)
    assert repr(h) == "tensor([[ 3.,  2.,  1.],\n        [-1.,  6., 13.]])"
    h_relu = h.clamp(min=0)
    assert repr(h_relu) == "tensor([[ 3.,  2.,  1.],\n        [ 0.,  6., 13.]])"
    y_pred = h_relu.mm(w2)
    assert repr(y_pred) == "tensor([[ 6.],\n        [-1.]])"
    loss = (y_pred - y).pow(2).sum()
    assert repr(loss) == "tensor(34.)"
    assert loss.dim() == 0 and loss.item() == 34.0
    learning_rate = 1e-6
    w1 -= learning_rate * w1
    assert repr(w1) == "tensor([[ 1.0000,  2.0000,  3.0000],\n        [-1.0000,  0.0000,  1.0000]])"


def test_training_loop_shapes_with_random_data():
    # seed: N, D_in, H, D_out = 64, 1000, 100, 10; x = torch.randn(N, D_in); ...
    N, D_in, H, D_out = 64, 1000, 100, 10
    w1 = torch.randn(D_in, H, requires_grad=True)
    w2 = torch.randn(H, D_out, requires_grad=True)
    assert w1.requires_grad and w2.requires_grad
    x = torch.randn(N, D_in)
    y = torch.randn(N, D_out)
    # plain tensors of the weights' shapes keep the math free of autograd
    y_pred = x.mm(torch.randn(D_in, H)).clamp(min=0).mm(torch.randn(H, D_out))
    assert str(y_pred.shape) == "torch.Size([64, 10])"
    loss = (y_pred - y).pow(2).sum()
    assert loss.dim() == 0 and loss.item() >= 0


# seed: def model(x, W, b):
#           return torch.matmul(x, W) + b
#       W = torch.randn(5, 1, requires_grad=True); b = torch.randn(1, requires_grad=True)
#       loss = (output - target) ** 2
def test_model_slide_forward_math():
    def model(x, W, b):
        return torch.matmul(x, W) + b

    W = torch.tensor([[1.], [2.], [3.], [4.], [5.]])
    b = torch.tensor([0.5])
    output = model(torch.ones(5), W, b)
    assert repr(output) == "tensor([15.5000])"
    assert repr((output - torch.tensor(15.)) ** 2) == "tensor([0.2500])"


# seed: def f(x):
#           return x ** 2 + x * 5 + 4
#       x = torch.ones(1, requires_grad=True)   (the value of f(x), without grad)
def test_polynomial_slide_forward():
    def f(x):
        return x ** 2 + x * 5 + 4

    assert repr(f(torch.ones(1))) == "tensor([10.])"
    assert repr(f(torch.tensor([0., 1., 2.]))) == "tensor([ 4., 10., 18.])"


# seed: rows, cols = 100, 100
#       x = torch.zeros(rows, cols, requires_grad=True)
#       while x.data.sum() < 10:                       # Data-dependent control flow!
#           idx = random.randrange(rows)
#           idx_var = torch.tensor([idx])
#           x[idx] = row_model(idx_var)                # In-place modifications!
#           x[idx].div_(x[idx].norm())
# (smaller, without autograd, a fixed row order and a stand-in row_model)
def test_data_dependent_control_flow():
    rows, cols = 4, 4
    x = torch.zeros(rows, cols)
    order = iter([2, 0, 3, 1])
    steps = 0
    while x.sum() < 5:
        idx = next(order)
        idx_var = torch.tensor([idx])
        x[idx] = idx_var.float() + 1.0
        x[idx].div_(x[idx].norm())
        steps += 1
    assert steps == 3
    assert repr(idx_var) == "tensor([3])"
    assert repr(x) == (
        "tensor([[0.5000, 0.5000, 0.5000, 0.5000],\n"
        "        [0.0000, 0.0000, 0.0000, 0.0000],\n"
        "        [0.5000, 0.5000, 0.5000, 0.5000],\n"
        "        [0.5000, 0.5000, 0.5000, 0.5000]])"
    )
    assert repr(x.sum()) == "tensor(6.)"
    assert repr(x.sum() < 5) == "tensor(False)"
    assert repr(torch.tensor([3., 4.]).norm()) == "tensor(5.)"
    assert torch.zeros(rows, cols, requires_grad=True).requires_grad is True


# --- "Data loading": the MNIST dataset slide ----------------------------------------------

# seed: img, target = self.data[index], self.labels[index]
#       img = Image.fromarray(img.numpy(), mode='L')
#       return len(self.data)
def test_mnist_dataset_tensor_access():
    data = torch.zeros(3, 28, 28, dtype=torch.uint8)
    labels = torch.tensor([7, 2, 1])
    img, target = data[1], labels[1]
    array = img.numpy()
    assert array.dtype == np.uint8 and array.shape == (28, 28)
    assert repr(target) == "tensor(2)"
    assert len(data) == 3


# --- "Easy C++ extensions": jacobi_solve in Python ---------------------------------------

def jacobi_solve(A, b, iters):
    # seed's code, with its `candidate` typo read as `cand`
    iter_matrix = -A.clone()
    iter_matrix.as_strided((A.size(0),), (A.size(0) + 1,)).zero_()
    iter_matrix /= A.diag().unsqueeze(-1)

    iter_offset = b / A.diag()

    cand = torch.zeros_like(b)
    for i in range(iters):
        cand = torch.matmul(iter_matrix, cand) + iter_offset
    return cand


A_JACOBI = [[4., 1., 0.], [1., 5., 2.], [0., 2., 8.]]
B_JACOBI = [1., 2., 3.]


def test_jacobi_solve_building_blocks():
    A = torch.tensor(A_JACOBI)
    b = torch.tensor(B_JACOBI)
    assert repr(A.diag()) == "tensor([4., 5., 8.])"
    assert repr(A.diag().unsqueeze(-1)) == "tensor([[4.],\n        [5.],\n        [8.]])"
    # negating 0. gives -0., which PyTorch prints with its sign
    assert repr(-A.clone()) == (
        "tensor([[-4., -1., -0.],\n"
        "        [-1., -5., -2.],\n"
        "        [-0., -2., -8.]])"
    )
    iter_matrix = -A.clone()
    diagonal = iter_matrix.as_strided((A.size(0),), (A.size(0) + 1,))
    assert repr(diagonal) == "tensor([-4., -5., -8.])"
    diagonal.zero_()  # a view: writes through to iter_matrix
    iter_matrix /= A.diag().unsqueeze(-1)
    assert repr(iter_matrix) == (
        "tensor([[ 0.0000, -0.2500, -0.0000],\n"
        "        [-0.2000,  0.0000, -0.4000],\n"
        "        [-0.0000, -0.2500,  0.0000]])"
    )
    assert repr(b / A.diag()) == "tensor([0.2500, 0.4000, 0.3750])"
    assert repr(A) == (  # clone() left A untouched
        "tensor([[4., 1., 0.],\n"
        "        [1., 5., 2.],\n"
        "        [0., 2., 8.]])"
    )


@pytest.mark.parametrize(
    "iters, expected_repr",
    [
        (1, "tensor([0.2500, 0.4000, 0.3750])"),
        (2, "tensor([0.1500, 0.2000, 0.2750])"),
        (50, "tensor([0.1912, 0.2353, 0.3162])"),
    ],
)
def test_jacobi_solve(iters, expected_repr):
    cand = jacobi_solve(torch.tensor(A_JACOBI), torch.tensor(B_JACOBI), iters)
    assert repr(cand) == expected_repr
    if iters == 50:  # converged: A @ cand == b
        np.testing.assert_allclose(np.array(A_JACOBI) @ cand.numpy(), B_JACOBI, atol=1e-5)
