"""symbolic_trace on models (modelled on PyTorch's test/test_fx.py): the recorded graph,
the generated module computing what the model computes (values and gradients), leaf
modules, concrete arguments, wrap, the errors of data-dependent control flow, and the
same graphs as torch.fx records for the same model definitions."""
import copy
import math
import re

import pytest

import ember_autograd  # noqa: F401 - gradients below
import ember_fx as fx
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch
from ember_fx import _patching
from ember_tensor.dispatch import Operator
from fx_models import define_models

MODELS = define_models(torch, nn, F)


def _signature(gm):
    """(op, target name) of each node: the loose form compared with torch.fx."""
    result = []
    for node in gm.graph.nodes:
        target = node.target
        if not isinstance(target, str):
            target = getattr(target, "__name__", str(target))
        result.append((node.op, target))
    return result


def _traced(name, *args):
    torch.manual_seed(0)
    model = MODELS[name](*args)
    model.eval()
    return model, fx.symbolic_trace(model)


# -- models -----------------------------------------------------------------------------

def test_mlp_traces_through_sequential_to_its_layers():
    model, gm = _traced("MLP")
    assert _signature(gm) == [("placeholder", "x"), ("call_module", "layers.0"), ("call_module", "layers.1"),
                              ("call_module", "layers.2"), ("call_function", "log_softmax"), ("output", "output")]
    x = torch.randn(5, 8)
    assert torch.equal(gm(x), model(x))
    assert type(gm).__name__ == "MLP" and isinstance(gm, nn.Module)
    assert list(gm.state_dict()) == list(model.state_dict())


def test_conv_net_computes_what_the_model_computes():
    model, gm = _traced("ConvNet")
    ops = [(n.op, n.target if isinstance(n.target, str) else n.target.__name__) for n in gm.graph.nodes]
    assert ("call_module", "conv1") in ops and ("call_function", "flatten") in ops
    assert ("call_function", "max_pool2d") in ops and ("call_module", "dropout1") in ops
    x = torch.randn(2, 1, 8, 8)
    assert torch.allclose(gm(x), model(x))


def test_nested_modules_parameters_and_buffers_become_get_attr():
    model, gm = _traced("Nested")
    get_attrs = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert get_attrs == ["first.scale", "first.shift", "second.scale", "second.shift"]
    calls = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    assert calls == ["first.linear", "second.linear", "head"]
    assert gm.first.scale is model.first.scale  # the module's own parameters, not copies
    assert set(gm.state_dict()) == set(model.state_dict())
    x = torch.randn(3, 6)
    assert torch.allclose(gm(x), model(x))
    gm(x).sum().backward()
    traced_grad = model.first.scale.grad.clone()
    model.zero_grad()
    model(x).sum().backward()
    assert torch.allclose(traced_grad, model.first.scale.grad)


def test_functions_trace_too_and_math_is_recorded():
    def f(x, y):
        return torch.sigmoid(x) * math.sqrt(y) - x.mean()

    gm = fx.symbolic_trace(f)
    assert [n.op for n in gm.graph.nodes].count("placeholder") == 2
    assert any(n.target is math.sqrt for n in gm.graph.nodes)
    x = torch.randn(4)
    assert torch.allclose(gm(x, 4.0), f(x, 4.0))


def _block_with_activation_attribute(nn, F):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = F.relu

        def forward(self, x):
            return self.act(self.fc(x))
    return Block()


def test_a_function_held_as_a_module_attribute_is_recorded_as_torch_fx_does():
    # TransformerEncoderLayer keeps ``self.activation = F.relu``; torch.fx records the call
    # (through __torch_function__), where calling it on a Proxy would raise.
    model = _block_with_activation_attribute(nn, F)
    gm = fx.symbolic_trace(model)
    assert ("call_function", "relu") in _signature(gm)
    assert model.act is F.relu  # restored after the trace
    x = torch.randn(3, 4)
    assert torch.equal(gm(x), model(x))
    real_torch = pytest.importorskip("torch")
    import torch.fx as torch_fx
    reference = _block_with_activation_attribute(real_torch.nn, real_torch.nn.functional)
    assert _signature(gm) == _signature(torch_fx.symbolic_trace(reference))


def test_operators_record_operator_functions_and_methods_record_call_method():
    import operator

    def f(x):
        a, b = x.chunk(2)
        return (-a + 1) * b[0] / 2 @ x.t(), x.shape[0]

    gm = fx.symbolic_trace(f)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert operator.neg in targets and operator.add in targets and operator.matmul in targets
    assert targets.count(operator.getitem) == 4  # a, b unpacked, b[0], shape[0]
    assert [n.target for n in gm.graph.nodes if n.op == "call_method"] == ["chunk", "t"]
    x = torch.randn(4, 4)
    expected, size = f(x)
    got, got_size = gm(x)
    assert torch.allclose(got, expected) and got_size == size == 4


def test_tensor_constants_become_attributes():
    table = torch.tensor([1.0, 2.0, 3.0])

    def f(x):
        return x + table

    gm = fx.symbolic_trace(f)
    assert [n.op for n in gm.graph.nodes] == ["placeholder", "get_attr", "call_function", "output"]
    assert torch.equal(gm._tensor_constant0, table)
    assert torch.equal(gm(torch.ones(3)), torch.tensor([2.0, 3.0, 4.0]))


def test_varargs_trace_as_one_placeholder():
    def f(*args):
        return args[0] + args[1]

    gm = fx.symbolic_trace(f)
    assert "def forward(self, *args)" in gm.code
    assert torch.equal(gm(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))


# -- control flow ---------------------------------------------------------------------------

def test_data_dependent_control_flow_raises_trace_error():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(fx.TraceError, match="symbolically traced variables cannot be used as inputs to control flow"):
        fx.symbolic_trace(f)
    assert isinstance(fx.TraceError("x"), ValueError)


def test_iterating_a_proxy_raises_and_len_raises():
    def loop(x):
        return [v for v in x]

    with pytest.raises(fx.TraceError, match="Proxy object cannot be iterated"):
        fx.symbolic_trace(loop)
    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing by default"):
        fx.symbolic_trace(lambda x: len(x))


def test_concrete_args_specialise_and_check_the_value():
    torch.manual_seed(0)
    model = MODELS["Branchy"]()
    with pytest.raises(fx.TraceError):
        fx.symbolic_trace(model)
    gm = fx.symbolic_trace(model, concrete_args={"use_relu": False})
    assert any(getattr(n.target, "__name__", None) == "tanh" for n in gm.graph.nodes)
    assert not any(getattr(n.target, "__name__", None) == "relu" for n in gm.graph.nodes)
    x = torch.randn(2, 4)
    assert torch.allclose(gm(x, False), model(x, False))
    with pytest.raises(AssertionError, match="use_relu has been specialized to have value False but got another value"):
        gm(x, True)


def test_concrete_args_none_and_placeholder_marker():
    def f(x, bias):
        return x if bias is None else x + bias

    gm = fx.symbolic_trace(f, concrete_args={"bias": None})
    assert torch.equal(gm(torch.ones(2), None), torch.ones(2))
    with pytest.raises(AssertionError):
        gm(torch.ones(2), torch.ones(2))
    kept = fx.symbolic_trace(lambda x, y: x * y, concrete_args={"y": fx.PH})
    assert [n.op for n in kept.graph.nodes].count("placeholder") == 2


# -- leaves and wrap --------------------------------------------------------------------------

def test_custom_leaf_modules():
    class LeafBlocks(fx.Tracer):
        def is_leaf_module(self, m, qualified_name):
            return isinstance(m, MODELS["Block"]) or super().is_leaf_module(m, qualified_name)

    torch.manual_seed(0)
    model = MODELS["Nested"]()
    graph = LeafBlocks().trace(model)
    assert [n.target for n in graph.nodes if n.op == "call_module"] == ["first", "second", "head"]
    gm = fx.GraphModule(model, graph)
    x = torch.randn(2, 6)
    assert torch.allclose(gm(x), model(x))


def branchy_helper(x, threshold):
    # Data-dependent control flow: untraceable unless wrapped as a leaf call.
    return x * 2 if float(x.sum()) > threshold else x


fx.wrap("branchy_helper")


def traced_caller(x):
    return branchy_helper(x, 0.0) + 1


def test_wrap_records_a_module_level_function_as_one_call():
    gm = fx.symbolic_trace(traced_caller)
    calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert calls[0] is branchy_helper and branchy_helper.__name__ == "branchy_helper"
    assert torch.equal(gm(torch.ones(2)), torch.full((2,), 3.0))
    assert torch.equal(gm(-torch.ones(2)), torch.zeros(2))
    assert globals()["branchy_helper"].__name__ == "branchy_helper" and not hasattr(branchy_helper, "__fx_original__")


def test_wrap_must_be_called_at_module_level():
    with pytest.raises(NotImplementedError, match="top level"):
        fx.wrap("len")


def test_tracing_restores_everything_it_patched_even_on_error():
    original_call, original_relu, original_flatten = nn.Module.__call__, F.relu, torch.hstack
    with pytest.raises(fx.TraceError):
        fx.symbolic_trace(lambda x: F.relu(x) if x.sum() else x)
    assert nn.Module.__call__ is original_call and F.relu is original_relu and torch.hstack is original_flatten
    assert _patching._routing_depth[0] == 0
    # No dispatcher wrapper left behind: a Proxy outside a trace is not recorded by ops.
    graph = fx.Graph()
    proxy = fx.Proxy(graph.placeholder("x"))
    with pytest.raises(Exception):
        torch.relu(proxy)
    assert isinstance(torch.relu, Operator)


def test_graph_module_deepcopy_is_independent():
    model, gm = _traced("Nested")
    clone = copy.deepcopy(gm)
    assert type(clone).__name__ == "Nested" and clone.code == gm.code
    assert clone.first.scale is not gm.first.scale
    x = torch.randn(2, 6)
    assert torch.allclose(clone(x), gm(x))
    with ember_autograd.no_grad():
        clone.first.scale.fill_(0.0)
    assert not torch.allclose(clone(x), gm(x))


def test_retracing_a_graph_module_gives_the_same_graph():
    model, gm = _traced("ConvNet")
    again = fx.symbolic_trace(gm)
    assert _signature(again) == _signature(gm)


# -- the same graphs as torch.fx -------------------------------------------------------------

@pytest.mark.parametrize("name, concrete", [("MLP", None), ("ConvNet", None), ("Nested", None),
                                            ("Branchy", {"use_relu": True})])
def test_graphs_match_torch_fx(name, concrete):
    real_torch = pytest.importorskip("torch")
    import torch.fx as torch_fx

    torch_models = define_models(real_torch, real_torch.nn, real_torch.nn.functional)
    ours = fx.symbolic_trace(MODELS[name](), concrete_args=concrete)
    theirs = torch_fx.symbolic_trace(torch_models[name](), concrete_args=concrete)

    def loose(gm):
        # torch.fx calls the placeholder of a concrete argument `name_1` (ember keeps the
        # parameter's name, so it can still be passed by keyword) and asserts with
        # torch._assert: compare ops, target tails and names up to those suffixes.
        def tail(node):
            target = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
            target = target.split(".")[-1].lstrip("_")
            return re.sub(r"_1$", "", target) if node.op == "placeholder" else target

        return [(n.op, tail(n), re.sub(r"_1$", "", n.name) if n.op == "placeholder" else n.name)
                for n in gm.graph.nodes]

    assert loose(ours) == loose(theirs)


def test_graph_module_pickles():
    import pickle

    model, gm = _traced("ConvNet")
    loaded = pickle.loads(pickle.dumps(gm))
    assert type(loaded).__name__ == "ConvNet" and loaded.code == gm.code
    x = torch.randn(2, 1, 8, 8)
    assert torch.allclose(loaded(x), gm(x))
    assert pickle.loads(pickle.dumps(torch.relu)) is torch.relu  # ops pickle by name


def test_buffers_as_proxies_on_request_and_fresh_names():
    class BufferTracer(fx.Tracer):
        proxy_buffer_attributes = True

    torch.manual_seed(0)
    model = MODELS["Block"](3)
    graph = BufferTracer().trace(model)
    assert [n.target for n in graph.nodes if n.op == "get_attr"] == ["scale", "shift"]
    tracer = fx.Tracer()
    tracer.root = model
    assert tracer.get_fresh_qualname("linear") == "linear0"


def test_submodule_management_of_graph_modules():
    model, gm = _traced("Nested")
    assert gm.add_submodule("extra.layer", nn.ReLU()) and isinstance(gm.extra.layer, nn.ReLU)
    gm.delete_all_unused_submodules()
    assert not hasattr(gm, "extra") and hasattr(gm.first, "linear")
    assert gm.delete_submodule("head") and not gm.delete_submodule("head")
    with pytest.raises(RuntimeError, match="nonexistent attribute head"):
        gm.graph.lint()


# Programs as PyTorch users write them; each traced, run, and compared with eager.
PROGRAMS = {
    "cat_stack": lambda x: torch.cat([x, x * 2], dim=0) + torch.stack((x, x)).sum(0).repeat(2, 1),
    "where_comparison": lambda x: torch.where(x > 0, x, torch.zeros_like(x)),
    "softmax_kwargs": lambda x: F.softmax(x, dim=-1) * x.mean(dim=1, keepdim=True),
    "indexing": lambda x: x[:, 1:3] + x[0, None, 1:3] + x[..., :2].T.T,
    "shape_arithmetic": lambda x: x.view(x.shape[0], -1).reshape(-1, x.size(1) * 1),
    "dtype_conversion": lambda x: x.to(torch.float64).float() + x.double().sum().item() * 0,  # item: a call_method
    "reflected_scalars": lambda x: (2 - x) ** 2 / (1 + abs(-x)) // 1 % 3,
    "matmul_transpose": lambda x: (x @ x.t()).transpose(0, 1).matmul(x),
    "constant_tensor": lambda x: x + torch.ones(3),
    "clamp_kwargs": lambda x: x.clamp(min=-0.5, max=0.5).clamp_min(0.1),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_programs_trace_and_run_as_eager(name):
    program = PROGRAMS[name]
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    gm = fx.symbolic_trace(program)
    gm.graph.lint()
    assert torch.allclose(gm(x), program(x))


def test_a_tracer_can_annotate_the_nodes_it_creates():
    class TaggingTracer(fx.Tracer):
        def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
            node = super().create_node(kind, target, args, kwargs, name, type_expr)
            node.meta["tag"] = kind
            return node

    graph = TaggingTracer().trace(lambda x: torch.relu(x).sum())
    assert [n.meta["tag"] for n in graph.nodes] == ["placeholder", "call_function", "call_method", "output"]
