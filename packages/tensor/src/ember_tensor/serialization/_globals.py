"""Names in checkpoints: which Python object a pickled global means, and which are safe.

A pickle names classes and functions by module path. PyTorch's files name PyTorch's paths
(``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``, ``torch.nn.modules.linear.Linear``),
so both directions need a table:

- ``register_global(name, obj)``: `name` (PyTorch's path) means `obj` when loading, and
  `obj` is written as `name` when saving, so real PyTorch can read ember's files;
- ``register_module_alias("torch.nn", "ember_nn")``: a whole PyTorch package served by an
  ember package (``torch.nn.modules.linear.Linear`` -> ``ember_nn.modules.linear.Linear``).

ember_tensor registers its own objects (tensors, storages, dtypes, ``Size``, devices); the
layers above register theirs (ember_nn its Parameter, the meta-package the module
aliases), because ember_tensor must not import them.

The allow-list of ``load(weights_only=True)`` is the objects registered with ``safe=True``
plus what the user adds through ``add_safe_globals`` / ``safe_globals``: PyTorch's
contract, so the same calls allow the same things.
"""
import contextlib
import importlib

__all__ = ["register_global", "register_module_alias", "add_safe_globals", "safe_globals",
           "get_safe_globals", "clear_safe_globals", "resolve_global", "allowed_global",
           "is_allowed_callable", "export_name", "unsupported_global_message"]

_BY_NAME = {}          # "torch.float32" -> ember object
_EXPORT = {}           # id(ember object) -> ("torch", "float32"); objects kept alive by _BY_NAME
_SAFE_NAMES = set()    # names allowed under weights_only=True without user action
_MODULE_ALIASES = []   # [("torch.nn", "ember_nn"), ...], longest prefix first
_user_safe = []        # what add_safe_globals added: objects or (object, "full.name") pairs


def register_global(name, obj, safe=False):
    """Make PyTorch's global `name` mean `obj` in both directions (see the module docstring).

    Args:
        name: a full dotted path, module then attribute (``"torch._utils._rebuild_parameter"``).
        obj: the ember object it stands for.
        safe: whether ``load(weights_only=True)`` may use it without the user allowing it.
            Only for objects that cannot run code or touch the system whatever their arguments.
    """
    module, _, attr = name.rpartition(".")
    if not module:
        raise ValueError(f"register_global expects a dotted path such as 'torch.Size', got {name!r}")
    _BY_NAME[name] = obj
    _EXPORT.setdefault(id(obj), (module, attr))
    if safe:
        _SAFE_NAMES.add(name)


def register_module_alias(torch_prefix, real_prefix):
    """Resolve globals under the package `torch_prefix` from `real_prefix`, and write classes
    defined under `real_prefix` with `torch_prefix` paths (``"torch.nn"``, ``"ember_nn"``)."""
    pair = (torch_prefix, real_prefix)
    if pair not in _MODULE_ALIASES:
        _MODULE_ALIASES.append(pair)
        _MODULE_ALIASES.sort(key=lambda p: -len(p[0]))


def _user_allowed():
    table = {}
    for entry in _user_safe:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(entry[1])}")
            table[entry[1]] = entry[0]
        else:
            table[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return table


def add_safe_globals(safe_globals):
    """Allow these globals in ``load(weights_only=True)``, like ``torch.serialization.add_safe_globals``.

    Args:
        safe_globals: classes or functions, or ``(obj, "full.dotted.name")`` pairs when the
            checkpoint names the object by another path. Only add what you trust: a class
            allowed here may be created and have its ``__setstate__`` called with data from
            the file.
    """
    for entry in safe_globals:
        if entry not in _user_safe:
            _user_safe.append(entry)


def get_safe_globals():
    """The globals the user has allowed for ``weights_only=True`` (a new list)."""
    return list(_user_safe)


def clear_safe_globals():
    """Forget every global that ``add_safe_globals`` allowed."""
    _user_safe.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """A context manager that allows `safe_globals` for ``weights_only=True`` inside its block.

    >>> import collections
    >>> with safe_globals([collections.Counter]):
    ...     collections.Counter in get_safe_globals()
    True
    """
    added = [g for g in safe_globals if g not in _user_safe]
    add_safe_globals(added)
    try:
        yield
    finally:
        for g in added:
            if g in _user_safe:
                _user_safe.remove(g)


def _import_attr(module, qualname):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def is_aliased_module(module):
    """Whether ``module`` lies under a registered package alias (``torchvision.models`` when
    ember-vision registered ``torchvision``): such globals must resolve to ember's classes,
    never to the real package, which would load PyTorch itself."""
    return any(module == prefix or module.startswith(prefix + ".") for prefix, _ in _MODULE_ALIASES)


def resolve_global(module, name):
    """The object that global ``module.name`` means for ``weights_only=False`` loading:
    the registered table, then the module aliases, then Python's own import."""
    full = f"{module}.{name}"
    if full in _BY_NAME:
        return _BY_NAME[full]
    for torch_prefix, real_prefix in _MODULE_ALIASES:
        if module == torch_prefix or module.startswith(torch_prefix + "."):
            real_module = real_prefix + module[len(torch_prefix):]
            try:
                return _import_attr(real_module, name)
            except (ImportError, AttributeError):
                pass
            try:  # ember's file layout may differ from PyTorch's: try the package's top level
                return _import_attr(real_prefix, name)
            except (ImportError, AttributeError):
                raise AttributeError(
                    f"ember has no counterpart of {full} (looked in {real_module} and {real_prefix})") from None
    if module == "torch" or module.startswith("torch."):
        raise AttributeError(f"ember has no counterpart of {full}; if the file was written by real PyTorch, "
                             "import ember (the meta-package) so that PyTorch's module paths resolve")
    return _import_attr(module, name)


def allowed_global(module, name):
    """The object for global ``module.name`` if ``weights_only=True`` allows it, else None."""
    full = f"{module}.{name}"
    if full in _SAFE_NAMES:
        return _BY_NAME[full]
    return _user_allowed().get(full)


def is_allowed_callable(obj):
    """Whether REDUCE / NEWOBJ / BUILD may use `obj` under ``weights_only=True``."""
    return (any(_BY_NAME[n] is obj for n in _SAFE_NAMES)
            or any(v is obj for v in _user_allowed().values()))


def export_name(obj):
    """``(module, name)`` that a checkpoint should use for `obj`, or None for Python's own."""
    found = _EXPORT.get(id(obj))
    if found is not None:
        return found
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        for torch_prefix, real_prefix in _MODULE_ALIASES:
            if torch_prefix != "torch" and (module == real_prefix or module.startswith(real_prefix + ".")):
                return torch_prefix + module[len(real_prefix):], qualname
    return None


def unsupported_global_message(full):
    """PyTorch's wording for a global outside the allow-list (users search for it)."""
    shown = full[len("builtins."):] if full.startswith("builtins.") else full
    return (f"Unsupported global: GLOBAL {shown} was not an allowed global by default. "
            f"Please use `torch.serialization.add_safe_globals([{shown}])` or the "
            f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist this global "
            "if you trust this class/function.")
