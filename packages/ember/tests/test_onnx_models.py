"""Whole models through ONNX: export -> onnx.checker -> onnxruntime at another batch size
equals ember's eager output (rtol 1e-4), and export -> ember.onnx.load -> same output. The
slides' deployment snippet runs with an ember model."""
import numpy as np
import pytest

import ember as torch
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


class Net(nn.Module):
    """The slides' MNIST net."""

    def __init__(self):
        super().__init__()
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
        return F.log_softmax(self.fc2(x), dim=1)


class ResidualBlock(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.pool(F.relu(out + x)).flatten(1)


class LSTMTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, batch_first=True)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.head(out)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, batch_first=True)

    def forward(self, x):
        return self.layer(x)


MODELS = {
    # name: (constructor, input shape without batch, dynamic batch)
    "mlp": (lambda: nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 4)), (3, 4), True),
    "mnist-net": (Net, (1, 28, 28), True),
    "resnet-block": (ResidualBlock, (4, 6, 6), True),
    # Their traces bake the batch size (initial states, batch * heads reshapes): fixed-size graphs.
    "lstm": (LSTMTagger, (5, 6), False),
    "transformer-layer": (Encoder, (5, 8), False),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_onnxruntime_and_round_trips(name, tmp_path):
    torch.manual_seed(0)
    make, shape, dynamic = MODELS[name]
    model = make()
    if name == "resnet-block":  # non-trivial running statistics
        model.train()
        model(torch.randn(8, *shape))
    model.eval()
    path = tmp_path / f"{name}.onnx"
    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if dynamic else None
    torch.onnx.export(model, torch.randn(2, *shape), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes=axes)
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto)
    assert {n for n, _ in model.named_parameters()} <= {t.name for t in proto.graph.initializer}
    x = torch.randn(3 if dynamic else 2, *shape)
    with torch.no_grad():
        expected = model(x).numpy()
    (got,) = ort.InferenceSession(str(path)).run(None, {"x": x.numpy()})
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    loaded = torch.onnx.load(str(path))
    np.testing.assert_allclose(loaded(x).detach().numpy(), expected, rtol=1e-4, atol=1e-5)


def test_dynamic_axes_that_a_trace_cannot_honour_are_refused(tmp_path):
    model = LSTMTagger().eval()
    with pytest.raises(torch.onnx.SymbolicError, match="does not honour dynamic_axes"):
        torch.onnx.export(model, torch.randn(2, 5, 6), str(tmp_path / "lstm.onnx"), input_names=["x"],
                          dynamic_axes={"x": {0: "batch"}})
    assert not (tmp_path / "lstm.onnx").exists()


def test_slides_deployment_snippet(tmp_path):
    model = Net()
    example_input = torch.randn(1, 1, 28, 28)
    torch.onnx.export(model, example_input, str(tmp_path / "net.onnx"))
    loaded = onnx.load(str(tmp_path / "net.onnx"))
    onnx.checker.check_model(loaded)
    text = onnx.helper.printable_graph(loaded.graph)
    assert "Conv" in text and "MaxPool" in text and "LogSoftmax" in text
    assert model.training  # export traced in eval mode and restored the mode


def test_traced_model_replays_and_shows_its_graph():
    torch.manual_seed(0)
    model = Net().eval()
    traced = torch.jit.trace(model, torch.randn(2, 1, 28, 28))
    x = torch.randn(4, 1, 28, 28)
    with torch.no_grad():
        np.testing.assert_allclose(traced(x).numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
    assert "convolution" in str(traced.graph) and "conv1.weight" in str(traced.graph)
