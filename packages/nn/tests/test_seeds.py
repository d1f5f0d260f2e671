"""The seeds' nn examples, with `import ember as torch` spelled as ember_tensor/ember_nn:
the slides' Net (conv, dropout2d, linear, max_pool2d, log_softmax) and its module API,
and the notes' "Extending torch.nn" Linear module built on a custom autograd Function."""
import numpy as np

import ember_autograd
import ember_tensor as torch
import ember_nn as nn
import ember_nn.functional as F
from ember_autograd import Function


class Net(nn.Module):
    """The slides' Net, verbatim."""

    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


NET_REPR = """Net(
  (conv1): Conv2d(1, 10, kernel_size=(5, 5), stride=(1, 1))
  (conv2): Conv2d(10, 20, kernel_size=(5, 5), stride=(1, 1))
  (conv2_drop): Dropout2d(p=0.5, inplace=False)
  (fc1): Linear(in_features=320, out_features=50, bias=True)
  (fc2): Linear(in_features=50, out_features=10, bias=True)
)"""


def test_net_repr_and_parameters_are_pytorchs():
    model = Net()
    assert repr(model) == NET_REPR
    assert [(name, tuple(p.shape)) for name, p in model.named_parameters()] == [
        ("conv1.weight", (10, 1, 5, 5)), ("conv1.bias", (10,)), ("conv2.weight", (20, 10, 5, 5)),
        ("conv2.bias", (20,)), ("fc1.weight", (50, 320)), ("fc1.bias", (50,)), ("fc2.weight", (10, 50)),
        ("fc2.bias", (10,))]


def test_net_module_api_of_the_slides():
    model = Net()
    assert len(list(model.parameters())) == 8
    serialized_weights = model.state_dict()
    other = Net()
    other.load_state_dict(serialized_weights)
    assert other.fc2.bias.tolist() == model.fc2.bias.tolist()
    assert model.eval() is model and not model.conv2_drop.training
    model.train()
    assert model.conv2_drop.training
    model.half()
    assert model.fc1.weight.dtype is torch.float16
    model.float()
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_net_forward_gives_log_probabilities():
    torch.manual_seed(0)
    model = Net().eval()
    out = model(torch.randn(3, 1, 28, 28))
    assert out.shape == (3, 10)
    np.testing.assert_allclose(np.exp(np.array(out.detach())).sum(axis=1), np.ones(3), rtol=1e-5)


def test_net_trains_and_its_loss_falls():
    torch.manual_seed(0)
    model = Net()
    data = torch.randn(16, 1, 28, 28)
    target = torch.randint(0, 10, (16,))

    def eval_loss():  # without dropout's noise
        model.eval()
        with ember_autograd.no_grad():
            loss = F.nll_loss(model(data), target).item()
        model.train()
        return loss

    before = eval_loss()
    for _ in range(40):  # 20 steps left the loss above 0.8x for half the seeds: luck, not a test
        model.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        with ember_autograd.no_grad():  # plain SGD: nn's tests do not import ember_optim
            for p in model.parameters():
                p.sub_(0.1 * p.grad)
    assert eval_loss() < 0.8 * before


class LinearFunction(Function):
    """The notes' LinearFunction."""

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

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


class Linear(nn.Module):
    """The notes' Linear module (its extra_repr reads in_features: the notes' attribute
    names are input_features, so the seed's repr would fail; we keep both)."""

    def __init__(self, input_features, output_features, bias=True):
        super(Linear, self).__init__()
        self.input_features = self.in_features = input_features
        self.output_features = self.out_features = output_features
        self.weight = nn.Parameter(torch.Tensor(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.Tensor(output_features))
        else:
            self.register_parameter('bias', None)
        self.weight.data.uniform_(-0.1, 0.1)
        if bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return 'in_features={}, out_features={}, bias={}'.format(
            self.in_features, self.out_features, self.bias is not None
        )


def test_notes_linear_module():
    torch.manual_seed(0)
    layer = Linear(3, 2)
    assert repr(layer) == "Linear(in_features=3, out_features=2, bias=True)"
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    assert float(layer.weight.abs().max()) <= 0.1
    x = torch.randn(4, 3, requires_grad=True)
    out = layer(x)
    expected = np.array(x.detach()) @ np.array(layer.weight.detach()).T + np.array(layer.bias.detach())
    np.testing.assert_allclose(np.array(out.detach()), expected, rtol=1e-5)
    out.sum().backward()
    np.testing.assert_allclose(np.array(layer.weight.grad), np.tile(np.array(x.detach()).sum(0), (2, 1)),
                               rtol=1e-5)
    np.testing.assert_allclose(np.array(layer.bias.grad), [4.0, 4.0])
    np.testing.assert_allclose(np.array(x.grad), np.tile(np.array(layer.weight.detach()).sum(0), (4, 1)),
                               rtol=1e-5)


def test_notes_linear_matches_ember_linear():
    torch.manual_seed(0)
    ours = Linear(5, 3)
    builtin = nn.Linear(5, 3)
    builtin.load_state_dict(ours.state_dict())
    x = torch.randn(2, 5)
    np.testing.assert_allclose(np.array(ours(x).detach()), np.array(builtin(x).detach()), rtol=1e-5)
