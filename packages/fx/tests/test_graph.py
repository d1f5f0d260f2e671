"""Graph and Node (modelled on PyTorch's test/test_fx.py): building graphs by hand, use
lists kept true by every edit, insertion points, copies, lint, dead code elimination,
printing, and the generated code."""
import doctest
import operator

import pytest

import ember_fx
import ember_fx.graph
import ember_nn as nn
import ember_tensor as torch
from ember_fx import Graph, GraphModule, Node, Proxy
from ember_fx.immutable_collections import immutable_list


def _graph_x_plus_one_relu():
    g = Graph()
    x = g.placeholder("x")
    add = g.call_function(operator.add, (x, 1))
    relu = g.call_method("relu", (add,))
    g.output(relu)
    return g, x, add, relu


def test_a_hand_built_graph_runs_as_a_module():
    g, x, add, relu = _graph_x_plus_one_relu()
    gm = GraphModule(nn.Module(), g)
    assert torch.equal(gm(torch.tensor([-3.0, 1.0])), torch.tensor([0.0, 2.0]))
    assert "add = x + 1;  x = None" in gm.code and "relu = add.relu();  add = None" in gm.code


def test_users_and_inputs_follow_every_edit():
    g, x, add, relu = _graph_x_plus_one_relu()
    assert list(x.users) == [add] and add.all_input_nodes == [x] and list(add.users) == [relu]
    with g.inserting_after(x):
        neg = g.call_function(operator.neg, (x,))
    add.replace_input_with(x, neg)
    assert list(x.users) == [neg] and add.args == (neg, 1)
    add.args = (x, 2)
    assert set(x.users) == {neg, add} and not neg.users
    add.update_kwarg("alpha", neg)
    assert neg.users and add.kwargs == {"alpha": neg}
    changed = x.replace_all_uses_with(neg, delete_user_cb=lambda user: user is not neg)
    assert changed == [add] and add.args == (neg, 2)


def test_node_arguments_cannot_be_mutated_behind_the_graph():
    g = Graph()
    x = g.placeholder("x")
    cat = g.call_function(torch.cat, ([x, x],))
    assert isinstance(cat.args[0], immutable_list)
    with pytest.raises(TypeError, match="does not support mutation"):
        cat.args[0].append(x)


def test_inserting_before_and_after_and_node_order():
    g, x, add, relu = _graph_x_plus_one_relu()
    with g.inserting_before(relu):
        mul = g.call_function(operator.mul, (add, 2))
    with g.inserting_after(x):
        first = g.call_function(operator.neg, (x,))
        second = g.call_function(operator.pos, (x,))
    # As in PyTorch, each node goes right after the anchor: the later comes first.
    assert [n.name for n in g.nodes] == ["x", "pos", "neg", "add", "mul", "relu", "output"]
    assert first.prev is second and mul.next is relu and [n.name for n in reversed(g.nodes)][0] == "output"
    relu.prepend(first)
    assert [n.name for n in g.nodes].index("neg") == [n.name for n in g.nodes].index("relu") - 1


def test_erase_node_refuses_a_used_node():
    g, x, add, relu = _graph_x_plus_one_relu()
    with pytest.raises(RuntimeError, match="Tried to erase Node add but it still had 1 users in the graph"):
        g.erase_node(add)
    relu.replace_all_uses_with(add)
    g.erase_node(relu)
    assert [n.name for n in g.nodes] == ["x", "add", "output"] and len(g.nodes) == 3
    assert not add.users or list(add.users)[0].op == "output"


def test_names_are_unique_and_legal():
    g = Graph()
    x = g.placeholder("x")
    names = [g.call_function(torch.relu, (x,)).name for _ in range(3)]
    names += [g.call_method("sum", (x,)).name, g.call_module("layer.0.conv", (x,)).name,
              g.call_function(getattr, (x, "shape")).name, g.create_node("call_function", operator.add, (x, x), name="add_1").name]
    assert names == ["relu", "relu_1", "relu_2", "sum_1", "layer_0_conv", "getattr_1", "add_1"]


def test_lint_finds_use_before_definition_and_missing_attributes():
    g, x, add, relu = _graph_x_plus_one_relu()
    g.lint()
    add.prepend(relu)  # relu now comes before what it uses
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    g2 = Graph()
    y = g2.get_attr("missing")
    g2.output(y)
    g2.owning_module = nn.Module()
    with pytest.raises(RuntimeError, match="references nonexistent attribute missing"):
        g2.lint()


def test_eliminate_dead_code_keeps_side_effects():
    g = Graph()
    x = g.placeholder("x")
    dead = g.call_function(torch.relu, (x,))
    g.call_function(operator.mul, (dead, 2))
    g.call_function(torch.relu_, (x,))  # in place: kept
    g.call_function(torch.rand, (3,))  # random: kept
    g.output(x)
    assert g.eliminate_dead_code() is True
    assert [n.name for n in g.nodes] == ["x", "relu_", "rand", "output"]
    assert g.eliminate_dead_code() is False
    assert g.eliminate_dead_code(is_impure_node=lambda n: n.op in ("placeholder", "output")) is True
    assert [n.name for n in g.nodes] == ["x", "output"]


def test_has_side_effect_marks_a_function_impure():
    def log_value(v):
        return None

    ember_fx.has_side_effect(log_value)
    g = Graph()
    x = g.placeholder("x")
    g.call_function(log_value, (x,))
    g.output(x)
    assert g.eliminate_dead_code() is False


def test_node_copy_graph_copy_and_deepcopy():
    import copy

    g, x, add, relu = _graph_x_plus_one_relu()
    clone = copy.deepcopy(g)
    assert [(n.op, n.target, n.name) for n in clone.nodes] == [(n.op, n.target, n.name) for n in g.nodes]
    assert all(a is not b for a, b in zip(clone.nodes, g.nodes))
    other = Graph()
    y = other.placeholder("y")
    result = other.graph_copy(g, {x: y})
    other.output(result)
    assert [n.name for n in other.nodes] == ["y", "add", "relu", "output"]
    assert list(other.nodes)[1].args == (y, 1)
    single = Graph()
    z = single.placeholder("z")
    copied = single.node_copy(add, lambda n: z)
    assert copied.args == (z, 1) and copied.target is operator.add


def test_printing_is_pytorchs():
    g, x, add, relu = _graph_x_plus_one_relu()
    assert str(g) == ("graph():\n"
                      "    %x : [num_users=1] = placeholder[target=x]\n"
                      "    %add : [num_users=1] = call_function[target=operator.add](args = (%x, 1), kwargs = {})\n"
                      "    %relu : [num_users=1] = call_method[target=relu](args = (%add,), kwargs = {})\n"
                      "    return relu")
    assert repr(add) == "add" and add.format_node().startswith("%add : [num_users=1]")
    assert repr(Proxy(add)) == "Proxy(add)"


def test_print_tabular(capsys):
    g, *_ = _graph_x_plus_one_relu()
    g.print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert lines[3].split()[:3] == ["call_function", "add", "operator.add"]


def test_generated_code_for_constants_and_containers():
    g = Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=None)
    s = g.call_function(operator.getitem, (x, (slice(None, 2), Ellipsis)))
    c = g.call_function(torch.cat, ([s, s],), {"dim": 0})
    t = g.call_method("to", (c, torch.float64))
    f = g.call_function(torch.clamp, (t,), {"min": float("-inf"), "max": 1.5})
    g.output({"out": f, "y": y})
    gm = GraphModule(nn.Module(), g)
    assert "def forward(self, x, y = None):" in gm.code
    assert "ember_tensor.cat([getitem, getitem], dim = 0)" in gm.code
    result = gm(torch.arange(6.0).reshape(3, 2))
    assert result["y"] is None and result["out"].dtype == torch.float64
    assert result["out"].tolist() == [[0.0, 1.0], [1.5, 1.5], [0.0, 1.0], [1.5, 1.5]]


def test_graph_module_from_dict_root_and_recompile():
    g = Graph()
    x = g.placeholder("x")
    w = g.get_attr("sub.weight")
    g.output(g.call_function(operator.mul, (x, w)))
    gm = GraphModule({"sub.weight": torch.full((2,), 3.0)}, g)
    assert torch.equal(gm(torch.ones(2)), torch.full((2,), 3.0))
    with pytest.raises(RuntimeError, match="referenced target sub.weight but that target was not provided"):
        GraphModule({}, g)
    out = gm.graph.output_node()
    with gm.graph.inserting_before(out):
        neg = gm.graph.call_function(operator.neg, (out.args[0],))
    out.args = (neg,)
    gm.recompile()
    assert torch.equal(gm(torch.ones(2)), torch.full((2,), -3.0))
    assert gm.print_readable(print_output=False).startswith("class GraphModule(torch.nn.Module):\n    def forward")


def test_node_requires_known_op_and_callable_target():
    g = Graph()
    with pytest.raises(ValueError):
        g.create_node("call_function", "relu")
    with pytest.raises(ValueError):
        Node(g, "n", "nonsense", "t", (), {})


def test_doctests():
    for module in (ember_fx, ember_fx.graph):
        assert doctest.testmod(module).failed == 0
