"""The meta-package: pins, the version check, the re-exported top level and the
PyTorch-named submodule paths."""

import importlib
import importlib.metadata
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import ember
import ember_tensor

PYPROJECT = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]

LAYERS = ["amp", "autograd", "compile", "data", "distributed", "distributions", "export", "fx", "nn", "optim", "tensor", "vision"]

HAS_CUDA_MODULE = importlib.util.find_spec("ember_tensor.cuda") is not None


def test_version_matches_pyproject():
    # Written once, as __version__; pyproject reads it from there.
    assert "version" in PROJECT["dynamic"] and "version" not in PROJECT
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "ember.__version__"


def test_installed_metadata_matches_version():
    try:
        installed = importlib.metadata.version(PROJECT["name"])
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("ember runs from a source tree, not an installed distribution")
    assert installed == ember.__version__


def _pins():
    """{distribution: version} of the meta-package's layers.txt, which pyproject reads."""
    lines = (Path(ember.__file__).with_name("layers.txt")).read_text().splitlines()
    return dict(line.split("==") for line in lines if line and not line.startswith("#"))


def test_dependencies_are_the_pins_of_layers_txt():
    assert "dependencies" in PROJECT["dynamic"] and "dependencies" not in PROJECT
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["dependencies"]["file"] == ["src/ember/layers.txt"]
    assert "layers.txt" in PYPROJECT["tool"]["setuptools"]["package-data"]["ember"]


def test_pins_every_layer_exactly():
    # The meta-package is the set of layers that was tested together: exact pins only.
    assert sorted(_pins()) == [f"ember-{layer}" for layer in LAYERS]


def test_import_refuses_tensor_other_than_the_pinned_one():
    pinned = _pins()["ember-tensor"]
    script = "import ember_tensor\nember_tensor.__version__ = '0.1.1'\nimport ember\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode != 0, "ember imported beside a tensor layer it does not pin"
    assert f"ember {ember.__version__} needs ember-tensor>={pinned},<" in result.stderr
    assert "but ember-tensor 0.1.1 is installed" in result.stderr


def test_runtime_pins_are_the_pins_of_layers_txt():
    runtime = {distribution: minimum for distribution, minimum, _ in ember.PINNED_LAYERS.values()}
    assert runtime == _pins()
    assert all(module == distribution.replace("-", "_") for module, (distribution, _, _) in ember.PINNED_LAYERS.items())


def test_top_level_is_ember_tensor_public_surface_plus_grad_modes_autocast_compile_and_vmap():
    import ember_amp
    import ember_autograd

    tensor_names = list(ember_tensor.__all__)
    assert ember.__all__[:len(tensor_names)] == tensor_names
    different = [name for name in tensor_names if getattr(ember, name) is not getattr(ember_tensor, name)]
    assert not different
    # functions that load ember-compile and ember-nn's torch.func on first call
    assert ember.__all__[-2:] == ["compile", "vmap"]
    for name in ember.__all__[len(tensor_names):-2]:
        layer = next(m for m in (ember_autograd, ember_autograd.anomaly_mode, ember_amp) if hasattr(m, name))
        assert getattr(ember, name) is getattr(layer, name), name
    assert "autocast" in ember.__all__ and "get_autocast_dtype" in ember.__all__
    assert ember.GradScaler is ember.amp.GradScaler  # torch.GradScaler is torch.amp.GradScaler
    assert "set_anomaly_enabled" in ember.__all__ and "is_anomaly_check_nan_enabled" in ember.__all__


def test_import_ember_installs_autograd():
    # PyTorch fills in autograd at `import torch`; backward() must not say "install ember-autograd".
    script = "import ember, ember_tensor._autograd_slot as slot\nprint(type(slot.hooks).__module__)\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip().startswith("ember_autograd")


@pytest.mark.parametrize("path, real", [
    ("ember.autograd", "ember_autograd"), ("ember.nn", "ember_nn"), ("ember.optim", "ember_optim"),
    ("ember.utils.data", "ember_data"), ("ember.distributed", "ember_distributed"),
    ("ember.distributions", "ember_distributions"), ("ember.distributions.constraints", "ember_distributions.constraints"),
    ("ember.distributions.transforms", "ember_distributions.transforms"), ("ember.distributions.kl", "ember_distributions.kl"),
    ("ember.distributions.utils", "ember_distributions.utils"),
    ("ember.amp", "ember_amp"), ("ember.cuda.amp", "ember_amp.cuda_amp"), ("ember.cpu.amp", "ember_amp.cpu_amp"),
    ("ember.accelerator", "ember_tensor.accelerator"), ("ember.backends", "ember_tensor.backend_flags"),
    ("ember.backends.cudnn", "ember_tensor.backend_flags.cudnn"), ("ember.types", "ember_tensor.types"),
    ("ember.multiprocessing", "ember_tensor.multiprocessing"), ("ember.utils.checkpoint", "ember_autograd.checkpoint"),
    ("ember.profiler", "ember_autograd.scheduled_profiler"), ("ember.hub", "ember_tensor.hub"),
    ("ember.special", "ember_tensor.special"),
    ("ember.compiler", "ember_compile.compiler"),
    ("ember.fx", "ember_fx"), ("ember.fx.passes.shape_prop", "ember_fx.passes.shape_prop"),
    ("ember.utils.backcompat", "ember_tensor.backcompat"),
    ("ember.random", "ember_tensor.random"), ("ember.sparse", "ember_tensor.sparse"),
    ("ember.nn.attention", "ember_nn.attention"), ("ember.func", "ember_nn.func"),
])
def test_pytorch_paths_are_the_layers(path, real):
    assert importlib.import_module(path) is importlib.import_module(real)


def test_paths_resolve_as_attributes_without_an_import():
    script = ("import ember\nimport ember_nn, ember_data\n"
              "assert ember.nn is ember_nn and ember.utils.data is ember_data\n")
    subprocess.run([sys.executable, "-c", script], check=True)


def test_alias_of_a_layer_checks_its_pin():
    script = ("import ember_nn\nember_nn.__version__ = '0.1.1'\nimport ember\nimport ember.nn\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode != 0
    assert "ember 0.1.0 needs ember-nn>=0.1.0,<0.1.1 but ember-nn 0.1.1 is installed" in result.stderr


def test_runtime_surface_under_pytorchs_paths():
    # What recent pytorch/examples touch first: the device choice, the flags, the versions.
    import ember.backends.cudnn as cudnn

    device = ember.accelerator.current_accelerator() or ember.device("cpu")
    assert ember.zeros(1, device=device).device.type == device.type
    cudnn.benchmark = True
    assert ember.backends.cudnn.benchmark and not ember.backends.mps.is_available()
    cudnn.benchmark = False
    assert ember.version.__version__ == ember.__version__ and ember.version.hip is None
    assert ember.version.cuda is None or ember.version.cuda[0].isdigit()
    assert ember.get_num_threads() >= 1 and ember.finfo(ember.float32).eps == 2 ** -23
    from ember.types import Device, Number  # noqa: F401 - importable, as from torch.types


def test_compile_and_compiler_under_pytorchs_names():
    # nanoGPT's pattern: model = torch.compile(model); checkpoints strip "_orig_mod."
    import ember.nn as nn

    model = nn.Linear(2, 3)
    compiled = ember.compile(model)
    assert compiled._orig_mod is model and list(compiled.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert ember.equal(compiled(ember.ones(1, 2)), model(ember.ones(1, 2)))
    assert not ember.compiler.is_compiling()
    script = "import sys, ember\nprint('ember_compile' in sys.modules, 'ember_nn' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]  # import ember stays light


def test_torch_func_and_torch_vmap_with_only_the_import_changed():
    # The per-sample-gradients tutorial's pattern, and torch.vmap at the top level.
    import ember as torch
    from ember.func import functional_call, grad, vmap

    model = torch.nn.Linear(3, 2)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(params, sample):
        return functional_call(model, params, (sample.unsqueeze(0),)).square().sum()

    data = torch.randn(4, 3)
    per_sample = vmap(grad(loss), in_dims=(None, 0))(params, data)
    for i in range(4):
        model.zero_grad()
        model(data[i:i + 1]).square().sum().backward()
        assert torch.allclose(per_sample["weight"][i], model.weight.grad)
    assert torch.equal(torch.vmap(torch.dot)(data, data), (data * data).sum(1))
    script = "import sys, ember\nprint('ember_nn' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False"]  # torch.vmap loads ember.func at its first call


def test_the_tensor_class_prints_its_public_path():
    import pickle

    assert str(type(ember.ones(1))) == "<class 'ember.Tensor'>"
    assert pickle.loads(pickle.dumps(ember.Tensor)) is ember.Tensor


def test_model_zoo_is_the_hubs_loader():
    import ember.utils.model_zoo
    import ember_tensor.hub

    assert ember.utils.model_zoo.load_url is ember_tensor.hub.load_state_dict_from_url
    assert ember.utils.model_zoo is importlib.import_module("ember.utils.model_zoo")


def test_path_of_a_module_not_written_yet_is_absent():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ember.utils.not_a_module")


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="module 'ember' has no attribute 'not_a_thing'"):
        ember.not_a_thing


@pytest.mark.skipif(not HAS_CUDA_MODULE, reason="ember_tensor has no cuda module yet")
def test_cuda_path_is_ember_tensor_cuda():
    import ember_tensor.cuda

    assert ember.cuda is ember_tensor.cuda
    assert importlib.import_module("ember.cuda") is ember_tensor.cuda
    # The alias must not rename the real module (relative imports inside it use its spec).
    assert ember_tensor.cuda.__spec__.name == "ember_tensor.cuda"


@pytest.mark.skipif(HAS_CUDA_MODULE, reason="ember_tensor has a cuda module")
def test_cuda_path_is_absent_while_ember_tensor_has_none():
    assert not hasattr(ember, "cuda")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("ember.cuda")



def test_nn_parallel_has_distributed_data_parallel_as_in_pytorch():
    script = ("import ember.nn as nn, ember_distributed\n"
              "assert nn.parallel.DistributedDataParallel is ember_distributed.DistributedDataParallel\n"
              "from ember.nn.parallel import DistributedDataParallel\n")
    subprocess.run([sys.executable, "-c", script], check=True)


def test_amp_paths_after_import_ember_alone():
    # nanoGPT's spellings: torch.amp.GradScaler, torch.cuda.amp.GradScaler, torch.autocast,
    # torch.cpu.amp.autocast, reachable with no import but ``import torch``.
    script = ("import ember as torch, ember_amp\n"
              "assert torch.amp.GradScaler is ember_amp.GradScaler and torch.amp.autocast is torch.autocast\n"
              "assert torch.cuda.amp is ember_amp.cuda_amp and torch.cpu.amp is ember_amp.cpu_amp\n"
              "from ember.cuda.amp import GradScaler\n"
              "assert GradScaler is ember_amp.cuda_amp.GradScaler\n")
    subprocess.run([sys.executable, "-c", script], check=True)
