"""``torch.fx`` through the meta-package: PyTorch's documentation example run with
``import ember as torch`` prints PyTorch's graph and code, ``torch.fx`` names resolve at
PyTorch's paths, ember's top-level functions called as ``torch.<name>`` are recorded, and a
torchvision model from ember-vision traces and runs as the eager model."""
import pytest

import ember as torch
import ember.nn as nn
from ember.fx import GraphModule, symbolic_trace
from ember.fx.passes.shape_prop import ShapeProp


class MyModule(torch.nn.Module):
    # torch.fx's documentation example, unchanged but for the import.
    def __init__(self):
        super().__init__()
        self.param = torch.nn.Parameter(torch.rand(3, 4))
        self.linear = torch.nn.Linear(4, 5)

    def forward(self, x):
        return self.linear(x + self.param).clamp(min=0.0, max=1.0)


DOC_GRAPH = """graph():
    %x : [num_users=1] = placeholder[target=x]
    %param : [num_users=1] = get_attr[target=param]
    %add : [num_users=1] = call_function[target=operator.add](args = (%x, %param), kwargs = {})
    %linear : [num_users=1] = call_module[target=linear](args = (%add,), kwargs = {})
    %clamp : [num_users=1] = call_method[target=clamp](args = (%linear,), kwargs = {min: 0.0, max: 1.0})
    return clamp"""

DOC_CODE = """


def forward(self, x):
    param = self.param
    add = x + param;  x = param = None
    linear = self.linear(add);  add = None
    clamp = linear.clamp(min = 0.0, max = 1.0);  linear = None
    return clamp
    """


def test_the_documentation_example_prints_pytorchs_graph_and_code():
    module = MyModule()
    symbolic_traced: torch.fx.GraphModule = torch.fx.symbolic_trace(module)
    assert str(symbolic_traced.graph) == DOC_GRAPH
    assert symbolic_traced.code == DOC_CODE
    x = torch.randn(3, 4)
    assert torch.equal(symbolic_traced(x), module(x))
    assert GraphModule is torch.fx.GraphModule and symbolic_trace is torch.fx.symbolic_trace


def test_the_documentation_example_matches_torch_fx_exactly():
    real_torch = pytest.importorskip("torch")
    import torch.fx as torch_fx

    class TheirModule(real_torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.param = real_torch.nn.Parameter(real_torch.rand(3, 4))
            self.linear = real_torch.nn.Linear(4, 5)

        forward = MyModule.forward

    theirs = torch_fx.symbolic_trace(TheirModule())
    assert str(theirs.graph) == DOC_GRAPH and theirs.code == DOC_CODE


def test_top_level_functions_reached_through_the_meta_package_are_recorded():
    def f(x, y):
        return torch.hstack([torch.relu(x), y]).sum()  # hstack is a Python function, relu an op

    gm = symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert targets == [torch.relu, torch.hstack]
    assert torch.hstack.__name__ == "hstack" and not hasattr(torch.hstack, "__fx_original__")
    x, y = torch.randn(3), torch.randn(2)
    assert torch.allclose(gm(x, y), f(x, y))


def test_a_torchvision_resnet_traces_and_runs_as_the_model():
    ember_vision = pytest.importorskip("ember_vision")
    torch.manual_seed(0)
    model = ember_vision.models.resnet18(num_classes=10).eval()
    gm = symbolic_trace(model)
    modules = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert modules[:4] == ["conv1", "bn1", "relu", "maxpool"] and "layer4.1.conv2" in modules
    assert modules[-1] == "fc"
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        assert torch.allclose(gm(x), model(x), atol=1e-5)
        ShapeProp(gm).propagate(x)
    assert tuple(gm.graph.output_node().args[0].meta["tensor_meta"].shape) == (1, 10)


def test_graph_module_trains_with_an_optimizer():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    gm = symbolic_trace(model)
    optimizer = torch.optim.SGD(gm.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    losses = []
    for _ in range(5):
        loss = torch.nn.functional.mse_loss(gm(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert gm.get_submodule("0").weight is model[0].weight  # the model's own parameters trained
