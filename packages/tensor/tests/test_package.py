"""ember-tensor as a package: its version, and the version-window check layers above use."""

import importlib.metadata
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import ember_tensor
from ember_tensor.version import check_layer_version

PYPROJECT = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def test_version_matches_pyproject():
    # Written once, as __version__; pyproject reads it from there.
    assert "version" in PROJECT["dynamic"] and "version" not in PROJECT
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "ember_tensor.version.__version__"


def test_installed_metadata_matches_version():
    try:
        installed = importlib.metadata.version(PROJECT["name"])
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("ember-tensor runs from a source tree, not an installed distribution")
    assert installed == ember_tensor.__version__


def test_depends_on_no_other_ember_package():
    # The bottom layer: `pip install ember-tensor` must not pull the layers above it.
    requirements = PROJECT["dependencies"] + sum(PROJECT["optional-dependencies"].values(), [])
    assert not [r for r in requirements if r.startswith("ember")]


@pytest.mark.parametrize(
    "version",
    ["0.1", "0.1.0", "0.1.7", "0.1.0.dev1", "0.1.0rc1", "0.1.0.post2", "0.1.0+local.3", "v0.1.2"],
)
def test_check_accepts_versions_in_range(version):
    check_layer_version("ember-tensor", version, "0.1", "0.2", "ember-autograd 0.1.0")


@pytest.mark.parametrize(
    "version",
    ["0.0.9", "0.0.0", "0.2", "0.2.0", "0.2.0.dev1", "0.2.0rc1", "0.3.0", "1.0", "unknown", ""],
)
def test_check_rejects_versions_out_of_range(version):
    with pytest.raises(ImportError) as raised:
        check_layer_version("ember-tensor", version, "0.1", "0.2", "ember-autograd 0.1.0")
    assert f"but ember-tensor {version} is installed" in str(raised.value)


def test_check_message_names_both_sides_and_the_fix():
    with pytest.raises(ImportError) as raised:
        check_layer_version("ember-tensor", "0.3.0", "0.1", "0.2", "ember-autograd 0.1.0")
    assert str(raised.value) == (
        "ember-autograd 0.1.0 needs ember-tensor>=0.1,<0.2 but ember-tensor 0.3.0 is installed; "
        "install a matching version: pip install 'ember-tensor>=0.1,<0.2'"
    )


@pytest.mark.parametrize(
    "minimum, below, version, ok",
    [
        ("0.1.0", "0.1.1", "0.1.0", True),  # how the meta-package checks an exact pin
        ("0.1.0", "0.1.1", "0.1.1", False),
        ("1.9", "1.10", "1.9.5", True),  # numeric, not string, comparison
        ("1.9", "1.10", "1.10.0", False),
        ("0.9", "2", "1.0", True),
    ],
)
def test_check_compares_release_numbers(minimum, below, version, ok):
    if ok:
        check_layer_version("ember-tensor", version, minimum, below, "ember 0.1.0")
    else:
        with pytest.raises(ImportError):
            check_layer_version("ember-tensor", version, minimum, below, "ember 0.1.0")


def test_check_rejects_malformed_bounds():
    with pytest.raises(ValueError, match="expected versions like '0.1'"):
        check_layer_version("ember-tensor", "0.1.0", "latest", "0.2", "ember-autograd 0.1.0")
