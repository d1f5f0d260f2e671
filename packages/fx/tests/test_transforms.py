"""Transforming traced models (modelled on PyTorch's fx tests and tutorials): rewriting
relu into gelu by graph edits and by replace_pattern, Interpreter and Transformer, and
ShapeProp — each checked against the eager model."""
import doctest
import operator

import pytest

import ember_fx
import ember_fx.interpreter
import ember_fx.passes.shape_prop
import ember_fx.proxy
import ember_fx.subgraph_rewriter
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch
from ember_fx import GraphModule, Interpreter, Proxy, Transformer, replace_pattern, symbolic_trace
from ember_fx.passes.shape_prop import ShapeProp, TensorMetadata
from fx_models import define_models

MODELS = define_models(torch, nn, F)


def _conv_net():
    torch.manual_seed(0)
    return MODELS["ConvNet"]().eval()


def test_relu_to_gelu_by_graph_edits():
    model = _conv_net()
    gm = symbolic_trace(model)
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is F.relu:
            with gm.graph.inserting_after(node):
                gelu = gm.graph.call_function(F.gelu, node.args, node.kwargs)
            node.replace_all_uses_with(gelu)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    assert "gelu" in gm.code and "relu" not in gm.code
    x = torch.randn(2, 1, 8, 8)
    x1 = F.gelu(model.conv1(x))
    x2 = F.max_pool2d(F.gelu(model.conv2(x1)), 2)
    expected = F.log_softmax(model.fc2(F.gelu(model.fc1(torch.flatten(x2, 1)))), dim=1)
    assert torch.allclose(gm(x), expected, atol=1e-6)
    assert not torch.allclose(gm(x), model(x), atol=1e-6)


def test_replace_pattern_relu_to_gelu_and_a_two_op_pattern():
    model = _conv_net()
    gm = symbolic_trace(model)

    def pattern(x):
        return F.relu(x)

    def replacement(x):
        return F.gelu(x)

    matches = replace_pattern(gm, pattern, replacement)
    assert len(matches) == 3 and all(isinstance(m, ember_fx.subgraph_rewriter.Match) for m in matches)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"].count(F.gelu) == 3

    def add_mul(x, y):
        return (x + y) * 2

    def fused(x, y):
        return torch.addcmul(x * 2, y, torch.full((), 2.0))

    def f(a, b, c):
        return add_mul(a, b) + add_mul(b, c) + (a + c)  # the last sum is not followed by * 2

    traced = symbolic_trace(f)
    matches = replace_pattern(traced, add_mul, fused)
    assert len(matches) == 2
    a, b, c = torch.randn(3), torch.randn(3), torch.randn(3)
    assert torch.allclose(traced(a, b, c), f(a, b, c))
    assert sum(1 for n in traced.graph.nodes if n.target is operator.add) == 3  # two joins + (a + c)


def test_replace_pattern_skips_a_match_whose_inner_value_escapes():
    def f(x):
        y = torch.relu(x)
        return torch.neg(y) + y  # y is used outside the relu -> neg pattern

    gm = symbolic_trace(f)
    matches = replace_pattern(gm, lambda x: torch.neg(torch.relu(x)), lambda x: torch.relu(torch.neg(x)))
    assert matches == []
    x = torch.randn(5)
    assert torch.allclose(gm(x), f(x))


def test_replace_pattern_chained_matches_read_the_replaced_values():
    def f(x):
        return torch.relu(torch.relu(x) - 1)

    gm = symbolic_trace(f)
    matches = replace_pattern(gm, lambda x: torch.relu(x), lambda x: torch.sigmoid(x))
    assert len(matches) == 2
    x = torch.randn(4)
    assert torch.allclose(gm(x), torch.sigmoid(torch.sigmoid(x) - 1))


def test_interpreter_runs_like_the_module_and_can_be_overridden():
    model = _conv_net()
    gm = symbolic_trace(model)
    x = torch.randn(2, 1, 8, 8)
    assert torch.allclose(Interpreter(gm).run(x), model(x))

    class CountingInterpreter(Interpreter):
        def __init__(self, module):
            super().__init__(module)
            self.calls = []

        def call_module(self, target, args, kwargs):
            self.calls.append(target)
            return super().call_module(target, args, kwargs)

        def call_function(self, target, args, kwargs):
            if target is F.relu:
                return F.gelu(*args, **kwargs)
            return super().call_function(target, args, kwargs)

    interpreter = CountingInterpreter(gm)
    out = interpreter.run(x)
    assert interpreter.calls == ["conv1", "conv2", "dropout1", "fc1", "fc2"]
    assert not torch.allclose(out, model(x))
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        Interpreter(gm).run()


def test_interpreter_frees_values_after_their_last_use():
    gm = symbolic_trace(lambda x: torch.relu(x) + 1)
    interpreter = Interpreter(gm)
    interpreter.run(torch.ones(2))
    assert list(interpreter.env) == [list(gm.graph.nodes)[-1]]  # only the output is left
    kept = Interpreter(gm, garbage_collect_values=False)
    kept.run(torch.ones(2))
    assert len(kept.env) == len(gm.graph.nodes)


def test_transformer_rewrites_into_a_new_module():
    model = _conv_net()
    gm = symbolic_trace(model)

    class ReluToGelu(Transformer):
        def call_function(self, target, args, kwargs):
            return super().call_function(F.gelu if target is F.relu else target, args, kwargs)

    new = ReluToGelu(gm).transform()
    assert isinstance(new, GraphModule) and new is not gm
    assert "gelu" in new.code and "relu" in gm.code
    x = torch.randn(2, 1, 8, 8)
    expected = gm(x)
    assert not torch.allclose(new(x), expected)
    identity = Transformer(gm).transform()
    assert torch.allclose(identity(x), expected)
    assert [n.op for n in identity.graph.nodes] == [n.op for n in gm.graph.nodes]


def test_shape_prop_records_tensor_metadata():
    model = _conv_net()
    gm = symbolic_trace(model)
    x = torch.randn(2, 1, 8, 8)
    ShapeProp(gm).propagate(x)
    interpreter = Interpreter(gm, garbage_collect_values=False)
    interpreter.run(x)
    env = interpreter.env
    for node in gm.graph.nodes:
        meta = node.meta["tensor_meta"]
        assert isinstance(meta, TensorMetadata)
        value = env[node]
        assert tuple(meta.shape) == tuple(value.shape) and meta.dtype == value.dtype
        assert tuple(meta.stride) == tuple(value.stride()) and meta.requires_grad == value.requires_grad
        assert node.meta["type"] is type(value)
    assert tuple(list(gm.graph.nodes)[1].meta["tensor_meta"].shape) == (2, 4, 6, 6)
    assert list(gm.graph.nodes)[0].meta["tensor_meta"].memory_format == torch.contiguous_format


def test_shape_prop_on_several_outputs():
    gm = symbolic_trace(lambda x: x.chunk(2))
    ShapeProp(gm).propagate(torch.ones(4, 3))
    chunk = [n for n in gm.graph.nodes if n.op == "call_method"][0]
    assert [tuple(m.shape) for m in chunk.meta["tensor_meta"]] == [(2, 3), (2, 3)]


def test_proxy_around_a_node_edits_a_graph():
    gm = symbolic_trace(lambda x: torch.relu(x))
    out = gm.graph.output_node()
    with gm.graph.inserting_before(out):
        doubled = (Proxy(out.args[0]) * 2).node
    out.args = (doubled,)
    gm.recompile()
    assert torch.equal(gm(torch.tensor([-1.0, 3.0])), torch.tensor([0.0, 6.0]))


def test_doctests():
    for module in (ember_fx.interpreter, ember_fx.passes.shape_prop, ember_fx.subgraph_rewriter, ember_fx.proxy):
        assert doctest.testmod(module).failed == 0


def test_graph_module_matches_torch_fx_code_shape():
    real_torch = pytest.importorskip("torch")
    import torch.fx as torch_fx

    theirs = torch_fx.symbolic_trace(define_models(real_torch, real_torch.nn, real_torch.nn.functional)["MLP"]())
    ours = symbolic_trace(MODELS["MLP"]())

    def shape(code):
        # Left-hand sides and the frees after last use, which do not depend on the framework.
        return [(line.split(" = ")[0].strip(), line.partition(";")[2].strip()) for line in code.strip().splitlines()]

    assert shape(ours.code) == shape(theirs.code)


def test_boxed_run_empties_the_callers_list():
    gm = symbolic_trace(lambda x, y: x + y)
    inputs = [torch.ones(2), torch.ones(2)]
    assert torch.equal(Interpreter(gm).boxed_run(inputs), torch.full((2,), 2.0)) and inputs == []
