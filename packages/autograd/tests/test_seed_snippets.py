"""Every autograd snippet of the seeds (../shared/seeds), run with ember in place of torch,
giving PyTorch's printed numbers.

Sources: the autograd / extending notes (pytorch-notes-autograd-broadcasting-cuda-extending),
the 0.2 release notes (higher-order gradients, retain_grad), the 0.4 migration guide
(pytorch-blog-feed-2017-2018: requires_grad, detach vs .data, scalars, no_grad) and the
slides (autograd.grad, .data updates, data-dependent control flow, Function, profiler).
Snippets that need layers above autograd (resnet18, nll_loss, optim) are written with
the same ops by hand; numbers marked "torch:" were printed by PyTorch 2.x on the same inputs.
"""
import json
import math
import types

import numpy as np
import pytest

import ember_autograd
import ember_tensor
from ember_autograd import Function, Variable, gradcheck

# `import ember as torch` as far as the two lowest layers go.
torch = types.SimpleNamespace(**{k: getattr(ember_tensor, k) for k in dir(ember_tensor) if not k.startswith("__")})
torch.autograd = ember_autograd
torch.no_grad = ember_autograd.no_grad
torch.set_grad_enabled = ember_autograd.set_grad_enabled


def vals(shape, scale):
    """Deterministic float64 values in [-scale/2, scale/2) (the same in the torch reference)."""
    n = int(np.prod(shape))
    return (torch.arange(n, dtype=torch.float64).reshape(shape) * 0.37 % 1.0 - 0.5) * scale


def close(t, expected, tol=1e-10):
    np.testing.assert_allclose(np.asarray(t.tolist(), dtype=np.float64), np.asarray(expected), rtol=tol, atol=tol)


# -- notes: autograd mechanics -----------------------------------------------------------

def test_notes_requires_grad_propagation(capsys):
    x = torch.randn(5, 5)    # requires_grad=False by default
    y = torch.randn(5, 5)    # requires_grad=False by default
    z = torch.randn(5, 5, requires_grad=True)
    a = x + y
    print(a.requires_grad)
    b = a + z
    print(b.requires_grad)
    assert capsys.readouterr().out == "False\nTrue\n"


def test_notes_in_place_correctness_check_uses_version_counters():
    x = torch.randn(3, requires_grad=True)
    y = x.exp()          # saves its result
    assert y._version == 0
    y.add_(1)            # bumps the version counter
    assert y._version == 1
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation: .* is at version 1; expected "
                                           "version 0 instead"):
        y.sum().backward()


# -- notes: extending autograd -------------------------------------------------------------

class LinearFunction(Function):

    # Note that both forward and backward are @staticmethods
    @staticmethod
    # bias is an optional argument
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    # This function has only a single output, so it gets only one gradient
    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0).squeeze(0)

        return grad_input, grad_weight, grad_bias


linear = LinearFunction.apply


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx is a context object that can be used to stash information
        # for backward computation
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # We return as many input gradients as there were arguments.
        # Gradients of non-Tensor arguments to forward must be None.
        return grad_output * ctx.constant, None


def test_notes_linear_function_gradcheck(capsys):
    input = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
             torch.randn(30, 20, dtype=torch.double, requires_grad=True))
    test = gradcheck(linear, input, eps=1e-6, atol=1e-4)
    print(test)
    assert capsys.readouterr().out == "True\n"


def test_notes_linear_function_with_bias_matches_the_formula():
    x, w, b = vals((4, 3), 2.0).requires_grad_(), vals((2, 3), 1.0).requires_grad_(), vals((2,), 1.0).requires_grad_()
    out = linear(x, w, b)
    assert out.grad_fn.name() == "LinearFunctionBackward"
    close(out, (x.detach() @ w.detach().t() + b.detach()).tolist())
    out.sum().backward()
    close(x.grad, np.tile(np.asarray(w.detach().sum(0).tolist()), (4, 1)))
    close(b.grad, [4.0, 4.0])
    assert gradcheck(linear, (x, w, b))


def test_notes_mul_constant_non_tensor_argument_gets_none():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = MulConstant.apply(x, 3.5)
    y.sum().backward()
    assert x.grad.tolist() == [3.5, 3.5]
    # backward written with differentiable ops: higher order works
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((MulConstant.apply(x, 2.0) ** 2).sum(), x, create_graph=True)
    g.sum().backward()
    assert x.grad.tolist() == [8.0, 8.0]


# -- 0.2 release notes ----------------------------------------------------------------------

def test_0_2_gradient_penalty_higher_order():
    # resnet18 + nll_loss in the notes; here a two-layer net and a hand-written nll_loss
    input = Variable(vals((2, 3), 2.0), requires_grad=True)
    W1, W2 = vals((3, 4), 1.0).requires_grad_(), vals((4, 3), 1.5).requires_grad_()
    target = Variable(torch.tensor([0, 2]))
    output = (input @ W1).tanh() @ W2
    logp = output - output.logsumexp(1, keepdim=True)
    loss = -logp[torch.arange(2), target].mean()

    grad_params = torch.autograd.grad(loss, (W1, W2), create_graph=True)
    # torch.autograd.grad does not accumuate the gradients into the .grad attributes
    assert W1.grad is None and all(g.requires_grad for g in grad_params)
    grad_norm = 0
    for grad in grad_params:
        grad_norm += grad.pow(2).sum()
    grad_norm = grad_norm.sqrt()
    grad_norm.backward()

    # torch: loss 1.1182868828485617 grad_norm 0.44226106078769994
    assert loss.item() == pytest.approx(1.1182868828485617, rel=1e-12)
    assert grad_norm.item() == pytest.approx(0.44226106078769994, rel=1e-12)
    close(W1.grad, [[-0.182130086469936, -0.09316753422538597, -0.08902063261661958, -0.12684497426647387],
                    [-0.03235354561606801, -0.01827618412894784, -0.01670301050338172, -0.029627762599057233],
                    [0.11742299523779998, 0.05661516596749029, 0.05561461160985614, 0.0675894490683594]])
    close(W2.grad, [[-0.15479159159817552, 0.14423624272982974, 0.010555348868345787],
                    [-0.1032860853561457, 0.10282270636412935, 0.0004633789920163627],
                    [-0.09867705045194326, 0.09887035148877459, -0.00019330103683129918],
                    [-0.1593876219726373, 0.19863559568266287, -0.03924797371002552]])
    close(input.grad, [[-0.3534437790623537, -0.11477004311319167, 0.0065999138421337835],
                       [0.047863759955978545, 0.0850567928123747, 0.10470098351312523]])


def test_0_2_hessian_vector_product():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x ** 3).sum() + x.prod()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (hv,) = torch.autograd.grad(g, x, torch.tensor([1.0, -1.0, 0.5]))
    assert hv.tolist() == [4.0, -8.5, 10.0]  # torch: [4.0, -8.5, 10.0]


def test_0_2_retain_grad():
    input = Variable(torch.rand(1, 3), requires_grad=True)
    h1 = input * 3
    out = (h1 * h1).sum()
    h1.retain_grad()
    out.backward()
    close(h1.grad, (2 * h1).tolist(), tol=1e-6)
    # without calling retain_grad(), h1.grad is None
    h2 = input * 3
    (h2 * h2).sum().backward()
    with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"):
        assert h2.grad is None


def test_0_2_variable_in_a_condition_is_its_value():
    b = Variable(torch.zeros(1))
    assert not b[0]  # modern PyTorch: a one-element tensor converts to bool
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(Variable(torch.zeros(2)))


# -- 0.4 migration guide ---------------------------------------------------------------------

def test_0_4_when_autograd_tracks_history():
    x = torch.ones(1)  # create a tensor with requires_grad=False (default)
    assert x.requires_grad is False
    y = torch.ones(1)  # another tensor with requires_grad=False
    z = x + y
    assert z.requires_grad is False
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and does not have a grad_fn$"):
        z.backward()
    w = torch.ones(1, requires_grad=True)
    assert w.requires_grad is True
    total = w + z
    assert total.requires_grad is True
    total.backward()
    assert repr(w.grad) == "tensor([1.])"
    assert (z.grad == x.grad == y.grad == None) is True  # noqa: E711


def test_0_4_manipulating_requires_grad():
    existing_tensor = torch.ones(2)
    existing_tensor.requires_grad_()
    assert existing_tensor.requires_grad is True
    my_tensor = torch.zeros(3, 4, requires_grad=True)
    assert my_tensor.requires_grad is True
    x = torch.randn(3, 3, dtype=torch.float64)
    assert x.requires_grad is False


def test_0_4_detach_reports_in_place_changes():
    a = torch.tensor([1, 2, 3.], requires_grad=True)
    out = a.sigmoid()
    c = out.detach()
    assert repr(c.zero_()) == "tensor([0., 0., 0.])"
    assert repr(out) == "tensor([0., 0., 0.], grad_fn=<SigmoidBackward0>)"  # modified by c.zero_() !!
    with pytest.raises(RuntimeError) as error:
        out.sum().backward()  # Requires the original value of out, but that was overwritten by c.zero_()
    assert str(error.value).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[torch.FloatTensor [3]], which is output 0 of SigmoidBackward0, is at version 1; expected version 0 "
        "instead.".replace("SigmoidBackward0", "Sigmoid"))


def test_0_4_data_is_not_tracked_and_gives_wrong_gradients():
    a = torch.tensor([1, 2, 3.], requires_grad=True)
    out = a.sigmoid()
    c = out.data
    assert repr(c.zero_()) == "tensor([0., 0., 0.])"
    assert repr(out) == "tensor([0., 0., 0.], grad_fn=<SigmoidBackward0>)"  # out was modified by c.zero_()
    out.sum().backward()
    assert repr(a.grad) == "tensor([0., 0., 0.])"  # The result is very, very wrong because `out` changed!


def test_0_4_scalars_and_accumulating_losses():
    total_loss = 0
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    for step in range(3):
        loss = (w * (step + 1)).pow(2).sum()
        assert loss.dim() == 0
        total_loss += loss.item()  # a Python number: no graph kept alive
    assert isinstance(total_loss, float) and total_loss == 5.0 * (1 + 4 + 9)


def test_0_4_no_grad_and_set_grad_enabled():
    x = torch.zeros(1, requires_grad=True)
    with torch.no_grad():
        y = x * 2
    assert y.requires_grad is False
    is_train = False
    with torch.set_grad_enabled(is_train):
        y = x * 2
    assert y.requires_grad is False
    try:
        torch.set_grad_enabled(True)  # this can also be used as a function
        y = x * 2
        assert y.requires_grad is True
        torch.set_grad_enabled(False)
        y = x * 2
        assert y.requires_grad is False
    finally:
        torch.set_grad_enabled(True)


# -- slides ----------------------------------------------------------------------------------

def test_slides_two_layer_net_with_data_updates():
    x, y = vals((8, 6), 2.0), vals((8, 3), 1.0)
    w1, w2 = vals((6, 5), 1.0).requires_grad_(), vals((5, 3), 1.0).requires_grad_()
    learning_rate = 1e-2
    losses = []
    for t in range(5):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        w1.data -= learning_rate * w1.grad.data
        w2.data -= learning_rate * w2.grad.data
        w1.grad.data.zero_()
        w2.grad.data.zero_()
    # torch:
    close(torch.tensor(losses, dtype=torch.float64),
          [2.723336851859999, 2.618101895572448, 2.5254682112050055, 2.4434024097682228, 2.3702742275301065])
    close(w2, [[-0.4689684071382174, -0.1591955645682579, 0.2763177791402714],
               [-0.3718715848796822, -0.024347749455687722, 0.3271166312964422],
               [-0.25967005039292773, 0.08855194320266284, 0.4412240555865625],
               [-0.14382831819094508, 0.18358678000665846, -0.3964580198027481],
               [-0.04364993629307864, 0.2889398343516957, -0.30776992249191637]])
    assert w1.is_leaf and w1.grad_fn is None


def test_slides_autograd_grad_of_a_function(capsys):
    # f(x) = x^2 + 5x + 4
    # f'(x) = 2x + 5
    def f(x):
        return x ** 2 + x * 5 + 4

    x = torch.ones(1, requires_grad=True)
    print(torch.autograd.grad(f(x), x))
    assert capsys.readouterr().out == "(tensor([7.]),)\n"  # tensor([7.]) == f'(1)


def test_slides_linear_model_with_autograd_grad():
    def model(x, W, b):
        return torch.matmul(x, W) + b

    data, targets = vals((4, 5), 2.0), vals((4, 1), 1.0)
    W = vals((5, 1), 1.0).requires_grad_()
    b = torch.tensor([0.1], dtype=torch.float64, requires_grad=True)
    lr = 0.1
    for example, target in zip(data, targets):
        output = model(example, W, b)
        loss = (output - target) ** 2
        grad_W, grad_b = torch.autograd.grad(loss, (W, b))
        W.data -= grad_W * lr
        b.data -= grad_b * lr
    # torch:
    close(W.reshape(-1), [-0.11673764321708018, -0.1920570666241147, 0.10903397943045721,
                          -0.0521640989525771, -0.04359439792200504])
    close(b, [-0.10648388970680328])


def test_slides_linear_model_with_backward_and_grad_zeroing():
    def model(x, W, b):
        return torch.matmul(x, W) + b

    data, targets = vals((4, 5), 2.0), vals((4, 1), 1.0)
    W = vals((5, 1), 1.0).requires_grad_()
    b = torch.tensor([0.1], dtype=torch.float64, requires_grad=True)
    lr = 0.1
    # The slide zeroes .grad first; in PyTorch too .grad is None before the first backward.
    W.grad, b.grad = torch.zeros_like(W), torch.zeros_like(b)
    for example, target in zip(data, targets):
        W.grad.data.zero_()
        b.grad.data.zero_()
        output = model(example, W, b)
        loss = (output - target) ** 2
        loss.backward()
        W.data -= W.grad.data * lr
        b.data -= b.grad.data * lr
    close(W.reshape(-1), [-0.11673764321708018, -0.1920570666241147, 0.10903397943045721,
                          -0.0521640989525771, -0.04359439792200504])
    close(b, [-0.10648388970680328])


def test_slides_in_place_modification_of_a_leaf_is_refused():
    rows, cols = 4, 3
    x = torch.zeros(rows, cols, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place "
                                           "operation.$"):
        x[1] = torch.ones(cols)  # In-place modifications! (as written on the slide, PyTorch refuses too)


def test_slides_data_dependent_control_flow_with_in_place_writes():
    base = torch.zeros(4, 3, dtype=torch.float64, requires_grad=True)
    emb = vals((4, 3), 2.0).requires_grad_()
    x = base.clone()
    for idx in [2, 0, 2]:                        # Data-dependent control flow!
        idx_var = torch.tensor([idx])
        x[idx] = emb[idx_var][0] * 2             # In-place modifications!
        row = x[idx].clone()
        x[idx] = row / row.norm()
    loss = (x ** 3 * vals((4, 3), 1.0)).sum()
    loss.backward()
    # torch:
    close(emb.grad, [[-0.18781988537073635, 0.19706473736535338, -0.2845480284494672], [0.0, 0.0, 0.0],
                     [0.23905633070868407, -0.13514994948456183, 0.17195493054791766], [0.0, 0.0, 0.0]])
    close(base.grad, np.zeros((4, 3)))


def test_slides_div_in_place_of_a_row_used_by_norm_raises_like_pytorch():
    emb = vals((4, 3), 2.0).requires_grad_()
    x = torch.zeros(4, 3, dtype=torch.float64, requires_grad=True).clone()
    x[2] = emb[2] * 2
    x[2].div_(x[2].norm())   # the slide's line: norm saved x[2], which div_ then changes
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        x.sum().backward()


class NormPdf(Function):
    @staticmethod
    def forward(ctx, x, loc=0.0, scale=1.0):
        # scipy.stats.norm.pdf(x) on the slide; the same density with NumPy (x.detach():
        # PyTorch 2 also refuses numpy() of a tensor that requires grad)
        host = (x.detach().numpy() - loc) / scale
        y = torch.from_numpy(np.exp(-0.5 * host ** 2) / (math.sqrt(2 * math.pi) * scale))
        ctx.loc, ctx.scale = loc, scale
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        x, y = ctx.saved_variables
        norm_x = (x - ctx.loc) / ctx.scale ** 2
        return -grad_y * y * norm_x


def test_slides_norm_pdf_function():
    norm_pdf = NormPdf.apply
    x = torch.tensor([-1.0, 0.0, 0.5, 2.0], dtype=torch.float64, requires_grad=True)
    y = norm_pdf(x)
    close(y, [0.24197072451914337, 0.3989422804014327, 0.3520653267642995, 0.05399096651318806])
    y.sum().backward()
    close(x.grad, [0.24197072451914337, 0.0, -0.17603266338214976, -0.10798193302637613])
    assert gradcheck(norm_pdf, (x,))


def _jacobi_solve(A, b, iterations):
    D = A.diagonal()
    R = A - torch.diag_embed(D)
    x = torch.zeros_like(b)
    for _ in range(iterations):
        x = (b - R.mv(x)) / D
    return x


def test_slides_autograd_grad_through_an_iterative_solver():
    A = torch.tensor([[4.0, 1.0, 0.0], [1.0, 5.0, 2.0], [0.0, 2.0, 6.0]], dtype=torch.float64)
    b = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(_jacobi_solve(A, b, 60).sum(), b)
    # d/db sum(A^-1 b) = A^-T 1
    close(g, np.linalg.solve(np.asarray(A.tolist()).T, np.ones(3)), tol=1e-9)


def test_slides_profiler_chrome_trace(tmp_path):
    from ember_autograd.profiler import profile

    A = torch.tensor([[4.0, 1.0], [1.0, 5.0]], dtype=torch.float64)
    b = torch.tensor([1.0, 2.0], dtype=torch.float64)
    with profile() as p:
        _jacobi_solve(A, b, 10)
    path = tmp_path / "jacobi.prof"
    p.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    assert len(events) == len(p.function_events) > 30
    assert {e["name"] for e in events} >= {"aten::mv", "aten::sub", "aten::div"}
