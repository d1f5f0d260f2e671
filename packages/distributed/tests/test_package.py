"""ember-distributed as a package: it imports, its version is its pyproject's, and it refuses
layers below it whose version is outside the range its pyproject declares."""

import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import ember_distributed

PROJECT = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]

# "ember-tensor>=0.1,<0.2" -> ("ember-tensor", "0.1", "0.2")
LAYER_RANGES = [
    re.fullmatch(r"(ember-[a-z]+)>=([0-9.]+),<([0-9.]+)", requirement).groups()
    for requirement in PROJECT["dependencies"]
    if requirement.startswith("ember-")
]


def test_version_matches_pyproject():
    assert ember_distributed.__version__ == PROJECT["version"]


def test_installed_metadata_matches_version():
    try:
        installed = importlib.metadata.version(PROJECT["name"])
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("ember-distributed runs from a source tree, not an installed distribution")
    assert installed == ember_distributed.__version__


def test_declares_exactly_the_layers_below():
    assert sorted(name for name, _, _ in LAYER_RANGES) == ["ember-autograd", "ember-tensor"]


@pytest.mark.parametrize("layer, minimum, below", LAYER_RANGES)
def test_import_refuses_layer_outside_declared_range(layer, minimum, below):
    # In a fresh interpreter: import the layers below, pretend one of them is the first
    # version out of range, then import ember_distributed.
    layer_module = layer.replace("-", "_")
    script = (
        "import ember_tensor, ember_autograd\n"
        f"{layer_module}.__version__ = {below!r}\n"
        "import ember_distributed\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode != 0, "ember_distributed imported beside an out-of-range " + layer
    needs = f"needs {layer}>={minimum},<{below} but {layer} {below} is installed"
    assert f"ImportError: ember-distributed {ember_distributed.__version__} {needs}" in result.stderr
