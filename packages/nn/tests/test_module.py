"""The Module contract: registration and its name checks, traversal, state_dict round
trips and strict-loading errors, modes, conversion, gradients and repr (forward and hooks:
test_module_hooks.py)."""
import copy
import pickle

import numpy as np
import pytest

import ember_autograd
import ember_tensor as torch
import ember_nn as nn
from ember_nn import Parameter


from _module_fixtures import Leaf, Tree


# -- registration and its errors --------------------------------------------------------

REGISTRATION_ERRORS = [
    (lambda m: m.register_parameter("a.b", None), KeyError, 'parameter name can\'t contain "."'),
    (lambda m: m.register_parameter("", None), KeyError, 'parameter name can\'t be empty string ""'),
    (lambda m: m.register_parameter(3, None), TypeError, "parameter name should be a string. Got int"),
    (lambda m: m.register_parameter("w", torch.ones(1)), TypeError,
     "cannot assign 'torch.FloatTensor' object to parameter 'w' (torch.nn.Parameter or None required)"),
    (lambda m: m.register_parameter("training", None), KeyError, "attribute 'training' already exists"),
    (lambda m: m.register_buffer("a.b", None), KeyError, 'buffer name can\'t contain "."'),
    (lambda m: m.register_buffer("", None), KeyError, 'buffer name can\'t be empty string ""'),
    (lambda m: m.register_buffer("b", 3), TypeError,
     "cannot assign 'int' object to buffer 'b' (torch Tensor or None required)"),
    (lambda m: m.add_module("a.b", nn.Module()), KeyError, 'module name can\'t contain ".", got: a.b'),
    (lambda m: m.add_module("", nn.Module()), KeyError, 'module name can\'t be empty string ""'),
    (lambda m: m.add_module("m", 3), TypeError, "int is not a Module subclass"),
    (lambda m: m.add_module("weight", nn.Module()), KeyError, "attribute 'weight' already exists"),
    (lambda m: setattr(m, "weight", torch.ones(2)), TypeError,
     "cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter or None expected)"),
    (lambda m: setattr(m, "running", 5), TypeError,
     "cannot assign 'int' as buffer 'running' (torch.nn.Buffer, torch.Tensor or None expected)"),
]


@pytest.mark.parametrize("action, error, message", REGISTRATION_ERRORS)
def test_registration_errors_are_pytorchs(action, error, message):
    with pytest.raises(error) as info:
        action(Leaf())
    text = info.value.args[0]
    assert text == message


def test_assigning_before_init_raises():
    class Early(nn.Module):
        def __init__(self):
            self.w = Parameter(torch.ones(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Early()


def test_non_leaf_parameter_is_refused():
    m = nn.Module()
    p = Parameter(torch.ones(2))
    p._grad_fn = object()  # what a computed tensor carries
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'w'"):
        m.register_parameter("w", p)


def test_attribute_assignment_registers_and_moves_between_kinds():
    m = nn.Module()
    m.x = nn.Module()
    m.x = Parameter(torch.ones(1))  # a parameter replaces the module of the same name
    assert list(m._parameters) == ["x"] and "x" not in m._modules
    with pytest.raises(TypeError, match="cannot assign 'ember_nn.modules.module.Module' as parameter 'x'"):
        m.x = nn.Module()
    del m.x
    m.x = nn.Module()
    m.b = nn.Buffer(torch.zeros(2), persistent=False)
    assert "b" in m._buffers and "b" in m._non_persistent_buffers_set
    m.b = torch.ones(2)  # re-assigning a buffer keeps it a (non-persistent) buffer
    assert m.b.tolist() == [1.0, 1.0] and "b" not in m.state_dict()
    m.x = None
    assert m._modules["x"] is None
    del m.b
    assert "b" not in m._buffers
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'b'"):
        m.b


def test_parameter_registered_as_none_is_skipped():
    m = nn.Module()
    m.register_parameter("bias", None)
    assert m.bias is None
    assert list(m.parameters()) == [] and list(m.state_dict()) == []


# -- traversal --------------------------------------------------------------------------

def test_named_members_with_prefix_recurse_and_dedup():
    t = Tree()
    assert [n for n, _ in t.named_parameters()] == ["bias", "first.weight", "block.0.weight", "block.1.weight"]
    assert [n for n, _ in t.named_parameters(recurse=False)] == ["bias"]
    assert [n for n, _ in t.named_parameters(prefix="net")][0] == "net.bias"
    assert [n for n, _ in t.named_buffers()] == [
        "first.running", "first.scratch", "block.0.running", "block.0.scratch", "block.1.running",
        "block.1.scratch"]
    assert [n for n, _ in t.named_children()] == ["first", "block"]
    assert [n for n, _ in t.named_modules()] == ["", "first", "block", "block.0", "block.1"]
    assert len(list(t.modules())) == 5 and len(list(t.children())) == 2


def test_shared_module_and_parameter_appear_once():
    shared = Leaf()
    seq = nn.Sequential(shared, shared)
    assert len(list(seq.parameters())) == 1
    assert len(list(seq.named_modules())) == 2
    assert len(list(seq.named_modules(remove_duplicate=False))) == 3
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == ["0.weight", "1.weight"]
    assert list(seq.state_dict()) == ["0.weight", "0.running", "1.weight", "1.running"]


def test_get_submodule_parameter_and_buffer():
    t = Tree()
    assert t.get_submodule("block.1") is t.block[1]
    assert t.get_submodule("") is t
    assert t.get_parameter("block.0.weight") is t.block[0].weight
    assert t.get_buffer("first.running") is t.first.running
    with pytest.raises(AttributeError, match="Sequential has no attribute `7`"):
        t.get_submodule("block.7")
    with pytest.raises(AttributeError, match="`bias` is not an nn.Module"):
        t.get_submodule("bias.x")
    with pytest.raises(AttributeError, match="`running` is not an nn.Parameter"):
        t.get_parameter("first.running")


def test_set_submodule_replaces_by_path():
    t = Tree()
    new = Leaf(5)
    t.set_submodule("block.1", new)
    assert t.block[1] is new
    with pytest.raises(AttributeError, match="Sequential has no attribute `7`"):
        t.set_submodule("block.7", Leaf(), strict=True)
    with pytest.raises(AttributeError, match="`bias` is not an nn.Module"):
        t.set_submodule("bias", Leaf())


def test_to_empty_keeps_shapes_and_dtypes():
    t = Tree().double()
    assert t.to_empty(device="cpu") is t
    assert t.first.weight.shape == (2,) and t.first.weight.dtype is torch.float64
    assert isinstance(t.first.weight, Parameter)


def test_dir_lists_registered_members():
    names = dir(Tree())
    assert {"first", "block", "bias", "forward", "training"} <= set(names)


# -- state_dict ----------------------------------------------------------------------------

def test_state_dict_round_trip_copies_in_place():
    source, target = Tree(), Tree()
    with ember_autograd.no_grad():
        for i, p in enumerate(source.parameters()):
            p.fill_(i + 1.5)
        source.first.running.fill_(7)
    weight = target.first.weight
    result = target.load_state_dict(source.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    assert target.first.weight is weight  # loaded in place: optimizers keep their references
    assert target.first.weight.tolist() == source.first.weight.tolist()
    assert target.first.running.tolist() == [7.0, 7.0]


def test_state_dict_values_are_detached_and_share_storage():
    t = Tree()
    sd = t.state_dict()
    assert list(sd) == ["bias", "first.weight", "first.running", "block.0.weight", "block.0.running",
                        "block.1.weight", "block.1.running"]
    assert not sd["bias"].requires_grad and type(sd["bias"]) is torch.Tensor
    with ember_autograd.no_grad():
        sd["bias"].fill_(3)
    assert t.bias.tolist() == [3.0, 3.0]
    assert t.state_dict(keep_vars=True)["bias"] is t.bias
    assert sd._metadata[""] == {"version": 1}


def test_strict_loading_lists_every_problem():
    sd = Tree().state_dict()
    del sd["first.weight"]
    sd["block.0.extra"] = torch.ones(1)
    sd["bias"] = torch.ones(5)
    with pytest.raises(RuntimeError) as info:
        Tree().load_state_dict(sd)
    assert str(info.value) == (
        "Error(s) in loading state_dict for Tree:\n"
        '\tMissing key(s) in state_dict: "first.weight". \n'
        '\tUnexpected key(s) in state_dict: "block.0.extra". \n'
        "\tsize mismatch for bias: copying a param with shape torch.Size([5]) from checkpoint, the shape "
        "in current model is torch.Size([2]).")


def test_non_strict_loading_returns_the_keys():
    sd = Tree().state_dict()
    del sd["first.weight"]
    sd["extra"] = torch.ones(1)
    missing, unexpected = Tree().load_state_dict(sd, strict=False)
    assert missing == ["first.weight"] and unexpected == ["extra"]
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        Tree().load_state_dict([1, 2])


def test_load_state_dict_assign_replaces_parameters():
    t = Tree()
    new_bias = torch.tensor([4.0, 5.0])
    sd = t.state_dict()
    sd["bias"] = new_bias
    t.load_state_dict(sd, assign=True)
    assert isinstance(t.bias, Parameter) and t.bias.tolist() == [4.0, 5.0]


def test_state_dict_hooks_and_extra_state():
    class WithExtra(Leaf):
        def get_extra_state(self):
            return {"step": 3}

        def set_extra_state(self, state):
            self.loaded = state

    m = WithExtra()
    seen = []
    handle = m.register_state_dict_pre_hook(lambda module, prefix, keep_vars: seen.append(prefix))
    sd = m.state_dict()
    assert sd["_extra_state"] == {"step": 3} and seen == [""]
    handle.remove()
    m.state_dict()
    assert seen == [""]
    post = []
    m.register_load_state_dict_post_hook(lambda module, keys: post.append(tuple(keys)))
    m.load_state_dict(sd)
    assert m.loaded == {"step": 3} and post == [([], [])]


# -- modes, conversion, gradients ------------------------------------------------------------

def test_train_eval_propagate():
    t = Tree()
    assert t.training and t.block[1].training
    assert t.eval() is t
    assert not t.training and not t.block[1].training
    t.train()
    assert t.first.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        t.train("yes")


@pytest.mark.parametrize("convert, dtype", [
    (lambda m: m.double(), torch.float64),
    (lambda m: m.half(), torch.float16),
    (lambda m: m.to(torch.float64), torch.float64),
    (lambda m: m.to(dtype=torch.float64).float(), torch.float32),
    (lambda m: m.to("cpu", torch.float64), torch.float64),
    (lambda m: m.to(torch.zeros(1, dtype=torch.float64)), torch.float64),
])
def test_dtype_conversion_keeps_parameter_objects(convert, dtype):
    t = Tree()
    t.register_buffer("steps", torch.zeros(1, dtype=torch.int64))
    weight = t.first.weight
    assert convert(t) is t
    assert t.first.weight is weight and isinstance(weight, Parameter) and weight.requires_grad
    assert weight.dtype is dtype and t.first.running.dtype is dtype
    assert t.steps.dtype is torch.int64  # integer buffers keep their dtype


def test_to_refuses_integer_dtypes_and_cpu_is_a_no_op():
    t = Tree()
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        t.to(torch.int32)
    assert t.cpu() is t and t.first.weight.device.type == "cpu"


def test_conversion_converts_grads_too():
    m = Leaf()
    m.weight.grad = torch.ones(2)
    m.double()
    assert m.weight.grad.dtype is torch.float64


def test_zero_grad_and_requires_grad():
    t = Tree()
    for p in t.parameters():
        p.grad = torch.ones_like(p)
    t.zero_grad(set_to_none=False)
    assert all(p.grad.tolist() == [0.0] * p.numel() for p in t.parameters())
    t.zero_grad()
    assert all(p.grad is None for p in t.parameters())
    assert t.requires_grad_(False) is t
    assert not any(p.requires_grad for p in t.parameters())


def test_apply_visits_children_first():
    order = []
    Tree().apply(lambda m: order.append(type(m).__name__))
    assert order == ["Leaf", "Leaf", "Leaf", "Sequential", "Tree"]


def test_deepcopy_and_pickle_keep_the_tree():
    t = Tree()
    with ember_autograd.no_grad():
        t.bias.fill_(2)
    for clone in (copy.deepcopy(t), pickle.loads(pickle.dumps(t))):
        assert isinstance(clone.bias, Parameter) and clone.bias is not t.bias
        assert clone.bias.tolist() == [2.0, 2.0]
        assert list(clone.state_dict()) == list(t.state_dict())


# -- repr ---------------------------------------------------------------------------------------

def test_repr_tree_with_extra_repr():
    assert repr(Tree()) == (
        "Tree(\n"
        "  (first): Leaf(n=2)\n"
        "  (block): Sequential(\n"
        "    (0): Leaf(n=2)\n"
        "    (1): Leaf(n=3)\n"
        "  )\n"
        ")")


def test_multiline_extra_repr_is_indented():
    class Two(nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    outer = nn.Module()
    outer.inner = Two()
    assert repr(outer) == "Module(\n  (inner): Two(\n    a=1\n    b=2\n  )\n)"


def test_parameter_is_a_leaf_tensor_sharing_storage():
    data = torch.zeros(3)
    p = Parameter(data)
    assert isinstance(p, torch.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([0., 0., 0.], requires_grad=True)"
    with ember_autograd.no_grad():
        p.fill_(1)
    assert data.tolist() == [1.0, 1.0, 1.0]
    assert not Parameter(torch.ones(1), requires_grad=False).requires_grad
    assert type(p * 2) is torch.Tensor
    np.testing.assert_array_equal(np.asarray(p.detach()), [1, 1, 1])


def test_uninitialized_parameter_materializes():
    p = nn.UninitializedParameter()
    assert repr(p) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        p.shape
    p.materialize((2, 3))
    assert type(p) is Parameter and p.shape == (2, 3) and p.requires_grad


def test_buffer_marker():
    b = nn.Buffer(torch.ones(2), persistent=False)
    assert isinstance(b, nn.Buffer) and type(b) is torch.Tensor and not b.persistent
    assert not isinstance(torch.ones(1), nn.Buffer)


def test_module_compile_needs_a_registered_compiler(monkeypatch):
    """Module.compile() compiles with the compiler a layer above registered (ember-compile);
    without one it says what to install, and the module still runs."""
    from ember_nn.modules import module as module_file
    monkeypatch.setattr(module_file, "_compiler", None)
    layer = nn.Linear(2, 3)
    with pytest.raises(RuntimeError, match="needs ember-compile"):
        layer.compile()
    seen = []

    def fake_compile(model, **kwargs):
        seen.append(kwargs)
        return lambda *args: model(*args) * 2  # a "compiled" forward that calls the module

    monkeypatch.setattr(module_file, "_compiler", (fake_compile, lambda: False))
    x = torch.ones(1, 2)
    plain = layer(x)
    assert layer.compile(fullgraph=True) is None and seen == [{"fullgraph": True}]
    assert torch.equal(layer(x), plain * 2)  # the compiled forward, its own call of the module plain
    assert list(layer.state_dict()) == ["weight", "bias"]
