"""torch.compile's API: PyTorch's argument checks and errors, what it returns for modules
and functions, and that the result computes what eager ember computes."""
import doctest
import pickle

from copy import deepcopy

import pytest

import ember_autograd  # noqa: F401 - training steps below
import ember_compile
import ember_nn as nn
import ember_tensor as torch
from ember_compile import InvalidBackend, OptimizedModule, compile, compiler


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def test_a_compiled_module_computes_and_trains_as_the_module():
    model = _model()
    compiled = compile(model)
    assert isinstance(compiled, OptimizedModule) and isinstance(compiled, nn.Module)
    assert compiled._orig_mod is model
    linear = nn.Linear(2, 2)
    assert compile(linear).weight is linear.weight  # attributes are read from the module
    x = torch.randn(3, 4)
    assert torch.equal(compiled(x), model(x))
    compiled(x).sum().backward()
    assert model[0].weight.grad is not None
    assert list(compiled.parameters()) == list(model.parameters())


def test_state_dict_keys_carry_pytorchs_prefix():
    compiled = compile(_model())
    keys = list(compiled.state_dict())
    assert keys[0] == "_orig_mod.0.weight" and all(k.startswith("_orig_mod.") for k in keys)
    fresh = compile(_model())
    fresh.load_state_dict(compiled.state_dict())
    # nanoGPT's way back to a plain model's keys
    plain = {k.removeprefix("_orig_mod."): v for k, v in compiled.state_dict().items()}
    _model().load_state_dict(plain)


def test_functions_decorators_and_disable():
    def double(x):
        """Twice x."""
        return 2 * x

    compiled = compile(double, mode="reduce-overhead")
    assert compiled(torch.ones(2)).tolist() == [2.0, 2.0]
    assert compiled.__doc__ == "Twice x." and compiled._torchdynamo_orig_callable is double

    @compile(fullgraph=True, dynamic=False)
    def square(x):
        return x * x
    assert square(torch.full((2,), 3.0)).tolist() == [9.0, 9.0]
    model = _model()
    assert compile(model, disable=True) is model


def test_pytorchs_argument_errors():
    with pytest.raises(RuntimeError, match="^Unrecognized mode=fast, should be one of: default, lite, "
                                           "reduce-overhead, max-autotune-no-cudagraphs, max-autotune$"):
        compile(_model(), mode="fast")
    with pytest.raises(RuntimeError, match="^Either mode or options can be specified, but both can't be"):
        compile(_model(), mode="default", options={})
    with pytest.raises(InvalidBackend, match="^Invalid backend: 'nope', see `torch._dynamo.list_backends"):
        compile(_model(), backend="nope")
    with pytest.raises(AssertionError, match="^A callable function is expected, but <class 'int'> is provided.$"):
        compile(5)
    with pytest.raises(InvalidBackend, match="a backend is a name or a callable"):
        compile(_model(), backend=5)


def test_every_registered_backend_name_runs():
    x = torch.randn(2, 4)
    for backend in compiler.list_backends(exclude_tags=()):
        assert torch.equal(compile(_model(), backend=backend)(x), _model()(x))


def test_compiler_controls():
    seen = []

    def note(x):
        seen.append(compiler.is_compiling())
        return x + 1

    compile(note)(torch.ones(1))
    assert seen == [True]  # the capture's run; the graph's runs call no Python
    assert not compiler.is_compiling() and not compiler.is_dynamo_compiling() and not compiler.is_exporting()
    compiler.reset()
    fn = compiler.disable(lambda x: x)
    assert fn(3) == 3 and compiler.disable()(abs)(-2) == 2
    assert compiler.list_backends() == ["cudagraphs", "inductor", "openxla", "tvm"]
    assert "ember" in compiler.list_backends(exclude_tags=())
    compiler.set_default_backend("eager")
    try:
        assert compiler.get_default_backend() == "eager"
    finally:
        compiler.set_default_backend("inductor")
    with compiler.set_stance("force_eager"):
        pass


def test_a_compiled_module_pickles():
    compiled = compile(_model())
    again = pickle.loads(pickle.dumps(compiled))
    x = torch.randn(1, 4)
    assert torch.equal(again(x), compiled(x))


def test_docstring_examples_run():
    assert doctest.testmod(ember_compile).failed == 0


def test_module_compile_compiles_in_place():
    """``model.compile()``: None back, the same module (state_dict keys unchanged) whose
    calls run the compiled forward (a graph captured), hooks around it, results and
    gradients equal to an uncompiled twin's; a compiled submodule inside a compiled parent."""
    torch.manual_seed(0)
    model, twin = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), nn.Sequential(
        nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    twin.load_state_dict(model.state_dict())
    assert model.compile() is None
    assert list(model.state_dict()) == list(twin.state_dict())
    hooked = []
    model.register_forward_hook(lambda module, args, out: hooked.append(out.shape))
    x = torch.randn(3, 4)
    for _ in range(2):
        model.zero_grad()
        twin.zero_grad()
        out = model(x)
        out.sum().backward()
        twin(x).sum().backward()
        assert torch.equal(out, twin(x))
        assert torch.equal(model[0].weight.grad, twin[0].weight.grad)
    assert hooked == [(3, 2), (3, 2)]
    compiled_function = model._compiled_call_impl._compiled_function
    assert compiled_function.graph_modules and not compiled_function.breaks  # a graph was captured
    parent = nn.Sequential(model, nn.Tanh())
    assert torch.equal(compile(parent)(x), parent(x))
    # A deep copy (an EMA model, say) runs its own parameters, compiled.
    copy = deepcopy(model)
    with ember_autograd.no_grad():
        copy[0].weight.zero_()
    assert torch.equal(copy(x), copy[2](copy[1](copy[0](x))))
    assert torch.equal(model(x), twin(x)) and not torch.equal(copy(x), model(x))
