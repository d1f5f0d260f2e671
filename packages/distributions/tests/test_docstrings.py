"""Every public module's docstring examples run (doctest), and every public name has a docstring."""
import doctest
import importlib
import inspect
import pkgutil

import pytest

import ember_distributions

# Every module, those inside subpackages (transforms/) included.
MODULES = [m.name.removeprefix("ember_distributions.")
           for m in pkgutil.walk_packages(ember_distributions.__path__, prefix="ember_distributions.")]


@pytest.mark.parametrize("name", MODULES)
def test_doctests_pass(name):
    module = importlib.import_module(f"ember_distributions.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


@pytest.mark.parametrize("name", [n for n in ember_distributions.__all__
                                  if inspect.isclass(getattr(ember_distributions, n))
                                  or inspect.isfunction(getattr(ember_distributions, n))])
def test_public_names_have_docstrings(name):
    assert inspect.getdoc(getattr(ember_distributions, name))
