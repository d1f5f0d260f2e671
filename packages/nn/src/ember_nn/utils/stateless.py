"""functional_call: run a module with some parameters and buffers replaced for one call."""
import contextlib

__all__ = ["functional_call"]


def _owner_and_name(module, key):
    path, _, name = key.rpartition(".")
    return module.get_submodule(path), name


@contextlib.contextmanager
def _swapped(module, tensors):
    """Put `tensors` (dotted name -> tensor) into the module's registries, and back after."""
    saved = []
    try:
        for key, tensor in tensors.items():
            owner, name = _owner_and_name(module, key)
            table = owner._parameters if name in owner._parameters else owner._buffers
            if name not in table:
                raise AttributeError(f"{owner._get_name()} has no parameter or buffer `{name}`")
            saved.append((table, name, table[name]))
            table[name] = tensor  # straight into the registry: any tensor, even a non-leaf
        yield
    finally:
        for table, name, original in reversed(saved):
            table[name] = original


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by the
    given tensors for this call only (the module is unchanged afterwards).

    Tied weights (one tensor under several names) are replaced together when
    `tie_weights`; `strict` requires a value for every parameter and buffer.

    >>> import ember_tensor as torch, ember_nn as nn
    >>> layer = nn.Linear(2, 1, bias=False)
    >>> functional_call(layer, {"weight": torch.ones(1, 2)}, (torch.ones(3, 2),)).tolist()
    [[2.0], [2.0], [2.0]]
    """
    if isinstance(parameters_and_buffers, (list, tuple)):
        merged = {}
        for mapping in parameters_and_buffers:
            for key in mapping:
                if key in merged:
                    raise ValueError(f"{key} appeared in multiple dictionaries; behavior of functional call is "
                                     "ambiguous")
            merged.update(mapping)
        parameters_and_buffers = merged
    tensors = dict(parameters_and_buffers)
    if tie_weights:
        # Every name that shares a tensor with a given name gets the same replacement.
        by_identity = {}
        for name, t in list(module.named_parameters(remove_duplicate=False)) + list(
                module.named_buffers(remove_duplicate=False)):
            by_identity.setdefault(id(t), []).append(name)
        for names in by_identity.values():
            given = [n for n in names if n in tensors]
            for n in names:
                if given and n not in tensors:
                    tensors[n] = tensors[given[0]]
    if strict:
        expected = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        expected |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing, unexpected = sorted(expected - tensors.keys()), sorted(tensors.keys() - expected)
        if missing or unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                               + "\n\t".join(filter(None, [
                                   f"Unexpected key(s): {', '.join(map(repr, unexpected))}." if unexpected else "",
                                   f"Missing key(s): {', '.join(map(repr, missing))}." if missing else ""])))
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, tensors):
        return module(*args, **(kwargs or {}))
