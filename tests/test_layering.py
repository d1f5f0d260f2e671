"""The layering check: the real tree keeps the stack's import contracts (.importlinter),
the check really fails when a package imports upward or sideways, and the stack that
tox and nox install (tools/install_stack.py) is the one the packages declare."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / ".importlinter"


def lint_imports_command():
    """lint-imports from this interpreter's environment, else from PATH."""
    beside_python = Path(sys.executable).parent / "lint-imports"
    found = str(beside_python) if beside_python.exists() else shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports not found: pip install import-linter (or run `tox -e layering`)")
    return found


def run_lint_imports(src_dirs, config):
    """Run lint-imports with only ``src_dirs`` importable; return (exit code, output)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(d) for d in src_dirs))
    result = subprocess.run(
        [lint_imports_command(), "--config", str(config), "--no-cache", "--no-logo"],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(config).parent,
        timeout=300,
    )
    return result.returncode, result.stdout + result.stderr


def test_real_tree_keeps_the_layering_contracts():
    code, output = run_lint_imports(sorted(REPO.glob("packages/*/src")), CONFIG)
    assert code == 0, output
    assert "0 broken" in output


@pytest.fixture
def copied_tree(tmp_path):
    """The packages' sources and the layering config, copied to a temporary directory."""
    src_dirs = []
    for src in sorted(REPO.glob("packages/*/src")):
        copy = tmp_path / src.parent.name / "src"
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        src_dirs.append(copy)
    shutil.copy(CONFIG, tmp_path / ".importlinter")
    return tmp_path, src_dirs


@pytest.mark.parametrize(
    "importer, imported, broken_contract",
    [
        ("ember_tensor", "ember_autograd", "each package imports only the layers below it"),
        ("ember_autograd", "ember_nn", "each package imports only the layers below it"),
        ("ember_nn", "ember_optim", "never import each other"),
        ("ember_export", "ember", "each package imports only the layers below it"),
    ],
    ids=["tensor-imports-autograd", "autograd-imports-nn", "nn-imports-optim", "export-imports-ember"],
)
def test_planted_forbidden_import_fails_the_check(copied_tree, importer, imported, broken_contract):
    root, src_dirs = copied_tree
    package_dir = next(src / importer for src in src_dirs if (src / importer).is_dir())
    (package_dir / "_planted_import.py").write_text(f"import {imported}\n")

    code, output = run_lint_imports(src_dirs, root / ".importlinter")

    assert code != 0, output
    assert f"{broken_contract} BROKEN" in output
    assert f"{importer}._planted_import -> {imported}" in output


def _requirements(pyproject):
    """A package's requirements: its pyproject's list, or the file that pyproject reads
    them from (the layers.txt where a package above the bottom writes its ranges)."""
    config = tomllib.loads(pyproject.read_text())
    if "dependencies" in config["project"]:
        return config["project"]["dependencies"]
    files = config["tool"]["setuptools"]["dynamic"]["dependencies"]["file"]
    lines = [line.split("#", 1)[0].strip() for f in files for line in (pyproject.parent / f).read_text().splitlines()]
    return [line for line in lines if line]


def test_installed_stack_is_the_declared_one():
    spec = importlib.util.spec_from_file_location("install_stack", REPO / "tools" / "install_stack.py")
    install_stack = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(install_stack)

    declared = {}
    for pyproject in REPO.glob("packages/*/pyproject.toml"):
        dependencies = _requirements(pyproject)
        names = [re.match(r"ember-([a-z]+)", d).group(1) for d in dependencies if d.startswith("ember-")]
        declared[pyproject.parent.name] = sorted(names)
    assert declared == {package: sorted(below) for package, below in install_stack.STACK.items()}
