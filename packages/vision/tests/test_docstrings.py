"""Every public module's docstring examples run (doctest), and every public name has a docstring."""
import doctest
import importlib
import inspect
import pkgutil

import pytest

import ember_vision

MODULES = ["ember_vision"] + sorted(m.name for m in pkgutil.walk_packages(ember_vision.__path__, "ember_vision.")
                 if not any(part.startswith("_") for part in m.name.split(".")))
PUBLIC = [(module, name) for module in MODULES for name in getattr(importlib.import_module(module), "__all__", [])]


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


@pytest.mark.parametrize("module, name", PUBLIC, ids=[f"{m}.{n}" for m, n in PUBLIC])
def test_public_names_have_docstrings(module, name):
    obj = getattr(importlib.import_module(module), name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        assert inspect.getdoc(obj), f"{module}.{name} has no docstring"
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if inspect.isfunction(member) and not attr.startswith("_") and attr not in ("forward", "extra_repr"):
                    assert inspect.getdoc(member), f"{module}.{name}.{attr} has no docstring"
