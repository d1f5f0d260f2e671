"""Every public module's docstring examples run (doctest), and every public name has a docstring."""
import doctest
import importlib
import inspect
import pkgutil

import pytest

import ember_amp

# Every module, those inside subpackages (transforms/) included.
MODULES = [m.name.removeprefix("ember_amp.")
           for m in pkgutil.walk_packages(ember_amp.__path__, prefix="ember_amp.")]


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name):
    module = importlib.import_module(f"ember_amp.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


@pytest.mark.parametrize("name", [n for n in ember_amp.__all__
                                  if inspect.isclass(getattr(ember_amp, n))
                                  or inspect.isfunction(getattr(ember_amp, n))])
def test_public_names_have_docstrings(name):
    assert inspect.getdoc(getattr(ember_amp, name))
