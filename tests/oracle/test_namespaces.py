"""Every public name of PyTorch 2.13's main namespaces is either in ember's namespace of
the same path or listed, with the reason, in not_provided.txt; a listed name that ember
now has fails too, so the list only shrinks.

The namespaces: torch, torch.Tensor, torch.nn, torch.nn.functional, torch.nn.init,
torch.nn.utils, torch.optim, torch.autograd, torch.autograd.forward_ad, torch.linalg,
torch.cuda, torch.fft, torch.signal.windows, torch.fx (and its Graph, Node, Tracer,
Interpreter). Their public names are ``dir()`` less what is not PyTorch's API (see
``torch_names``). Runs in the `oracle` tox environment, the one place PyTorch is installed.
"""
import importlib
import pathlib
import types

import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402,F401 - after the check that PyTorch is there; installs the ember.* paths

NAMESPACES = [
    "torch",
    "torch.Tensor",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.utils",
    "torch.optim",
    "torch.autograd",
    "torch.autograd.forward_ad",
    "torch.linalg",
    "torch.cuda",
    "torch.fft",
    "torch.signal.windows",
    "torch.fx",
    "torch.fx.Graph",
    "torch.fx.Node",
    "torch.fx.Tracer",
    "torch.fx.Interpreter",
]
NOT_PROVIDED = pathlib.Path(__file__).with_name("not_provided.txt")


def _resolve(path):
    """The object at a dotted path: a module, or an attribute of one (``torch.Tensor``)."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        module, _, attribute = path.rpartition(".")
        return getattr(importlib.import_module(module), attribute)


def _is_pytorch_api(value):
    """False for what a namespace holds without it being PyTorch's API.

    - Modules: the submodules (torch.fft under torch, torch.nn.functional under torch.nn)
      are namespaces of their own, checked or not on their own terms.
    - Objects defined outside torch: the typing helpers PyTorch's sources import at module
      level (``Callable``, ``Optional``, ``cast``, ``lru_cache`` in torch.cuda, ...).
      Classes of torch._C report a ``torch...`` module, builtins' values none we meet.
    - What PyTorch marks deprecated with ``@deprecated`` (``__deprecated__``, PEP 702):
      ``nn.Container``, ``nn.NLLLoss2d``, ``nn.utils.clip_grad_norm``,
      ``cuda.memory_cached``, ... Names deprecated only in their docstrings stay in:
      we cannot tell them apart reliably, so they are listed like any other.
    """
    if isinstance(value, types.ModuleType):
        return False
    module = getattr(value, "__module__", None)
    if isinstance(module, str) and module != "builtins" and module.partition(".")[0] != "torch":
        return False
    return not isinstance(getattr(value, "__deprecated__", None), str)


# Names that _is_pytorch_api cannot tell by their value, each with why it is not API.
NOT_API = {
    # typing.TYPE_CHECKING imported at module level: a plain bool.
    "TYPE_CHECKING": "typing.TYPE_CHECKING",
    # Strings or dicts of strings from which PyTorch formats its docstrings.
    "reproducibility_notes": "docstring fragments",
    "sparse_support_notes": "docstring fragments",
    "tf32_notes": "docstring fragments",
    "common_notes": "docstring fragments",
}


def torch_names(namespace):
    """The public names of a PyTorch namespace: no leading underscore, API (above)."""
    obj = _resolve(namespace)
    names = set()
    for name in dir(obj):
        if name.startswith("_") or name in NOT_API:
            continue
        if name == "Tensor" and namespace != "torch":
            continue  # ``from torch import Tensor`` for annotations (nn.functional, nn.init)
        if _is_pytorch_api(getattr(obj, name)):
            names.add(name)
    return names


def not_provided():
    """{namespace: {name: reason}} from not_provided.txt (``namespace.name -- reason``)."""
    listed = {namespace: {} for namespace in NAMESPACES}
    for number, line in enumerate(NOT_PROVIDED.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        path, sep, reason = line.partition(" -- ")
        assert sep and reason.strip(), f"not_provided.txt:{number}: no ' -- reason': {line!r}"
        namespace, _, name = path.strip().rpartition(".")
        assert namespace in listed, f"not_provided.txt:{number}: {namespace!r} is not a checked namespace"
        assert name not in listed[namespace], f"not_provided.txt:{number}: {path} listed twice"
        listed[namespace][name] = reason.strip()
    return listed


LISTED = not_provided()


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_every_name_present_or_listed(namespace):
    ours = _resolve("ember" + namespace[len("torch"):])
    missing = sorted(
        name for name in torch_names(namespace) if name not in LISTED[namespace] and not hasattr(ours, name)
    )
    assert not missing, (
        f"{namespace}: names PyTorch has that ember neither provides nor lists in not_provided.txt:\n"
        + "\n".join(f"{namespace}.{name}" for name in missing)
    )


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_listed_names_are_missing(namespace):
    """The list only shrinks: a name ember now has, or PyTorch does not have, must go."""
    ours = _resolve("ember" + namespace[len("torch"):])
    theirs = torch_names(namespace)
    present = sorted(name for name in LISTED[namespace] if hasattr(ours, name))
    assert not present, "listed in not_provided.txt but ember has them now:\n" + "\n".join(
        f"{namespace}.{name}" for name in present
    )
    unknown = sorted(set(LISTED[namespace]) - theirs)
    assert not unknown, "listed in not_provided.txt but not a public name of PyTorch's:\n" + "\n".join(
        f"{namespace}.{name}" for name in unknown
    )
