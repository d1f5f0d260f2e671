"""Packages meet through declared surfaces: no package (its sources or its tests) imports
another package's underscore module. ember-tensor declares `dispatch`, `nn_ops`,
`sparse_ops`, `fusion` and `version` for the layers above (DESIGN.md, section 1); each other package
is used through its public modules. The check reads the import statements of every
Python file (no import is run), and a planted import shows that it can fail."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _packages():
    """{import name: package folder} for every package of the monorepo."""
    found = {}
    for src in sorted(REPO.glob("packages/*/src")):
        for top in src.iterdir():
            if (top / "__init__.py").exists():
                found[top.name] = src.parent
    return found


PACKAGES = _packages()


def _private_modules(import_name):
    """The underscore modules and packages of package `import_name` (any depth)."""
    root = PACKAGES[import_name] / "src" / import_name
    private = set()
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") and not p.startswith("__") for p in parts):
            private.add(".".join(parts))
    return private


PRIVATE = {name: _private_modules(name) for name in PACKAGES}


def foreign_private_imports(path, own_package):
    """(line, module) for each import in file `path` of another package's private module."""
    tree = ast.parse(Path(path).read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            top = target.split(".")[0]
            if top in PACKAGES and top != own_package and target in PRIVATE[top]:
                found.append((node.lineno, target))
    return found


def _files_of(folder):
    return sorted(p for p in folder.rglob("*.py") if "build" not in p.parts)


def test_no_package_imports_another_packages_private_modules():
    offences = []
    for name, folder in PACKAGES.items():
        for path in _files_of(folder / "src") + _files_of(folder / "tests"):
            for line, module in foreign_private_imports(path, name):
                offences.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    assert not offences, "imports of another package's private module:\n" + "\n".join(offences)


@pytest.mark.parametrize("statement", [
    "from ember_tensor._ops import nn\n",
    "import ember_tensor._dispatch\n",
    "from ember_tensor import _dispatch\n",
    "from ember_tensor._backends.cuda import storage\n",
])
def test_a_planted_private_import_is_found(tmp_path, statement):
    planted = tmp_path / "planted.py"
    planted.write_text(statement)
    assert foreign_private_imports(planted, "ember_nn")
    assert not foreign_private_imports(planted, "ember_tensor")  # a package's own: allowed


def test_the_declared_surfaces_are_public_modules():
    for surface in ("dispatch", "nn_ops", "sparse_ops", "version"):
        assert (REPO / "packages/tensor/src/ember_tensor" / f"{surface}.py").exists()
        assert f"ember_tensor.{surface}" not in PRIVATE["ember_tensor"]
