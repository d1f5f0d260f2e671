"""The checks every ember package above the bottom layer passes, written once.

A package's tests/test_package.py makes its own copy with one line:

    TestPackage = package_contract.tests_for(__file__, "ember_nn", ["ember-tensor", "ember-autograd"])

The checks: the package imports, its version is its pyproject's (and the installed
distribution's, when it is installed), its dependencies are read from its layers.txt, it
declares exactly the layers below it, and it refuses to import beside a layer whose
version is outside the range it declares.
"""
import importlib
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest
from ember_tensor.version import read_layers

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

__all__ = ["tests_for"]


def tests_for(test_file, module_name, layers_below):
    """A pytest class of the package checks for the package whose tests/ holds `test_file`.

    `layers_below` are the distribution names it must depend on, bottom layer first.
    """
    root = Path(test_file).parents[1]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    project = pyproject["project"]
    dist_name = project["name"]
    dynamic = pyproject["tool"]["setuptools"]["dynamic"]
    # The version is written once, as the package's __version__; pyproject reads it from there.
    version_attr = dynamic["version"]["attr"]
    # The ranges are written once, in the package's layers.txt; pyproject reads its
    # dependencies from there and so does the import-time check: ("ember-tensor", "0.1", "0.2").
    layers_file = root / "src" / module_name / "layers.txt"
    layer_ranges = read_layers(layers_file)

    class TestPackage:
        def test_version_matches_pyproject(self):
            assert "version" in project["dynamic"] and "version" not in project
            source, _, name = version_attr.rpartition(".")
            assert getattr(importlib.import_module(source), name) == importlib.import_module(module_name).__version__

        def test_installed_metadata_matches_version(self):
            try:
                installed = importlib.metadata.version(dist_name)
            except importlib.metadata.PackageNotFoundError:
                pytest.skip(f"{dist_name} runs from a source tree, not an installed distribution")
            assert installed == importlib.import_module(module_name).__version__

        def test_dependencies_are_read_from_layers_txt(self):
            assert "dependencies" in project["dynamic"] and "dependencies" not in project
            assert [root / f for f in dynamic["dependencies"]["file"]] == [layers_file]
            assert "layers.txt" in pyproject["tool"]["setuptools"]["package-data"][module_name]
            assert all(minimum and below for _, minimum, below in layer_ranges)

        def test_declares_exactly_the_layers_below(self):
            assert sorted(name for name, _, _ in layer_ranges) == sorted(layers_below)

        @pytest.mark.parametrize("layer, minimum, below", layer_ranges)
        def test_import_refuses_layer_outside_declared_range(self, layer, minimum, below):
            # In a fresh interpreter: import the layers below, pretend one of them is the
            # first version out of range, then import the package.
            layer_module = layer.replace("-", "_")
            script = (f"import {', '.join(name.replace('-', '_') for name in layers_below)}\n"
                      f"{layer_module}.__version__ = {below!r}\n"
                      f"import {module_name}\n")
            result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
            assert result.returncode != 0, f"{module_name} imported beside an out-of-range {layer}"
            version = importlib.import_module(module_name).__version__
            needs = f"needs {layer}>={minimum},<{below} but {layer} {below} is installed"
            assert f"ImportError: {dist_name} {version} {needs}" in result.stderr

    return TestPackage
