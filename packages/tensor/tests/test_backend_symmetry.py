"""The ground floor's shape (DESIGN.md section 2), held by tests:

- the CPU and CUDA backends have the same families and, in each, the same functions
  with the same parameters, except the gaps declared in `_backends._families.GAPS`;
- backend modules take and return arrays: they import no Tensor, no op and no public
  module of ember_tensor;
- the ops do not branch on a device type.

Modules not converted yet are listed by name below; each list is checked both ways (a
listed module must still need its place), so it can only shrink.
"""
import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

from ember_tensor._backends._families import FAMILIES, GAPS

ROOT = Path(__file__).resolve().parents[1] / "src" / "ember_tensor"
DEVICES = ("cpu", "cuda")

# Backend modules that still take tensors (their families are not converted yet).
NOT_YET_ARRAYS_ONLY = set()
# Op modules (the ops, ember.kernel's, the sparse, linalg and serialization families) that
# still choose code by device type.
OP_FOLDERS = ("_ops", "_custom", "sparse", "linalg", "serialization")
STILL_BRANCHING = set()


def _family(device, family):
    return importlib.import_module(f"ember_tensor._backends.{device}.{family}")


def _functions(module):
    """The functions and classes (a random family's `Engine`) a backend module exports."""
    return {name for name in module.__all__
            if inspect.isfunction(getattr(module, name)) or inspect.isclass(getattr(module, name))}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_backend_has_each_family_with_the_same_functions(family):
    names = {device: _functions(_family(device, family)) for device in DEVICES}
    for device, other in ((d, o) for d in DEVICES for o in DEVICES if d != o):
        missing = {n for n in names[other] - names[device] if device not in GAPS.get((family, n), {})}
        assert not missing, f"{device} backend's {family} lacks {sorted(missing)} (declare a gap or add them)"


@pytest.mark.parametrize("family", FAMILIES)
def test_a_function_takes_the_same_parameters_on_every_backend(family):
    # An op calls backend.<family>.<fn>(...) without asking which device it is on.
    modules = {device: _family(device, family) for device in DEVICES}
    shared = set.intersection(*(_functions(m) for m in modules.values()))
    for name in sorted(shared):
        params = {device: list(inspect.signature(getattr(m, name)).parameters) for device, m in modules.items()}
        assert params["cpu"] == params["cuda"], f"{family}.{name}: {params}"


def test_declared_gaps_are_real():
    for (family, name), devices in GAPS.items():
        assert family in FAMILIES
        for device in devices:
            others = [d for d in DEVICES if d not in devices]
            assert name not in _functions(_family(device, family)), f"{device} has {family}.{name} now"
            assert any(name in _functions(_family(d, family)) for d in others)


def test_a_backend_family_loads_on_first_use():
    import ember_tensor._backends as backends
    from ember_tensor import device
    backend = backends.get(device("cpu"))
    assert backend.sorting is _family("cpu", "sorting")
    with pytest.raises(AttributeError):
        backend.no_such_family


_UPWARD = re.compile(r"ember_tensor\.(Tensor|_tensor|_ops|_dispatch|_random|_printing|_sparse\w*|cuda|linalg|sparse|"
                     r"serialization|dispatch|nn_ops|sparse_ops)(\.|$)")


def _imports(path):
    """Absolute names of the modules that file `path` (a module of ember_tensor) imports."""
    package = ["ember_tensor"] + list(path.relative_to(ROOT).parent.parts)
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names += [f"{module}.{a.name}" for a in node.names]
    return names


def _backend_modules():
    return sorted(p for p in (ROOT / "_backends").rglob("*.py"))


def test_backend_modules_import_no_tensor_op_or_public_module():
    offenders = {}
    for path in _backend_modules():
        upward = sorted({n for n in _imports(path) if _UPWARD.search(n) or n == "ember_tensor"})
        key = str(path.relative_to(ROOT / "_backends"))
        if upward and key not in NOT_YET_ARRAYS_ONLY:
            offenders[key] = upward
        if key in NOT_YET_ARRAYS_ONLY:
            assert upward, f"{key} imports nothing above the backends any more: take it off NOT_YET_ARRAYS_ONLY"
    assert not offenders, offenders


_DEVICE_BRANCH = re.compile(r"""\.type\s*[!=]=\s*["'](cpu|cuda)["']|\bis_cuda\b|\bon_cuda\b""")


def test_ops_do_not_branch_on_the_device_type():
    offenders = []
    for folder in OP_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            key = str(path.relative_to(ROOT))
            branches = bool(_DEVICE_BRANCH.search(path.read_text()))
            if branches and key not in STILL_BRANCHING:
                offenders.append(key)
            if key in STILL_BRANCHING:
                assert branches, f"{key} no longer branches on the device: take it off STILL_BRANCHING"
    assert not offenders, f"ops that choose code by device type: {offenders}"
