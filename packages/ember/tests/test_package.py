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

PROJECT = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]

LAYERS = ["autograd", "data", "distributed", "export", "nn", "optim", "tensor"]

HAS_CUDA_MODULE = importlib.util.find_spec("ember_tensor.cuda") is not None


def test_version_matches_pyproject():
    assert ember.__version__ == PROJECT["version"]


def test_installed_metadata_matches_version():
    try:
        installed = importlib.metadata.version(PROJECT["name"])
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("ember runs from a source tree, not an installed distribution")
    assert installed == ember.__version__


def test_pins_every_layer_exactly():
    # The meta-package is the set of layers that was tested together: exact pins only.
    pins = dict(requirement.split("==") for requirement in PROJECT["dependencies"])
    assert sorted(pins) == [f"ember-{layer}" for layer in LAYERS]


def test_import_refuses_tensor_other_than_the_pinned_one():
    pinned = dict(r.split("==") for r in PROJECT["dependencies"])["ember-tensor"]
    script = "import ember_tensor\nember_tensor.__version__ = '0.1.1'\nimport ember\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode != 0, "ember imported beside a tensor layer it does not pin"
    assert f"ember {PROJECT['version']} needs ember-tensor>={pinned},<" in result.stderr
    assert "but ember-tensor 0.1.1 is installed" in result.stderr


def test_top_level_is_ember_tensor_public_surface():
    assert ember.__all__ == list(ember_tensor.__all__)
    different = [name for name in ember.__all__ if getattr(ember, name) is not getattr(ember_tensor, name)]
    assert not different


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

