"""torch.func's module helpers: ``functional_call``, ``stack_module_state`` and
``replace_all_batch_norm_modules_``."""
import ember_tensor as E

from ..modules.batchnorm import _BatchNorm
from ..utils.stateless import functional_call as _stateless_functional_call

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with its parameters and buffers replaced, for this call
    only, by the tensors of `parameter_and_buffer_dicts` (a dict of name -> tensor, or a
    tuple/list of such dicts with no name twice). See nn.utils.stateless.functional_call.

    >>> import ember_tensor as torch, ember_nn as nn
    >>> layer = nn.Linear(2, 1, bias=False)
    >>> functional_call(layer, ({"weight": torch.ones(1, 2)},), torch.ones(1, 2)).tolist()
    [[2.0]]
    """
    if isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for key in d:
                counts[key] = counts.get(key, 0) + 1
        repeated = [key for key, count in counts.items() if count > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        merged = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    elif isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    return _stateless_functional_call(module, merged, args, kwargs, tie_weights=tie_weights, strict=strict)


def _stacked_leaf(tensors, name):
    """The models' tensors stacked along a new first dim: a fresh leaf requiring grad when theirs do."""
    requires = [t.requires_grad for t in tensors]
    if any(requires) and not all(requires):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    stacked = E.stack([t.detach() for t in tensors])
    return stacked.requires_grad_() if all(requires) else stacked


def stack_module_state(models):
    """``(params, buffers)``: each a dict of name -> the tensors of `models` (modules of one
    class) stacked along a new first dimension, ready for ``vmap(functional_call...)``
    ensembling. Stacked parameters are new leaves (optimizable), unrelated to the models'.

    >>> import ember_nn as nn
    >>> params, buffers = stack_module_state([nn.Linear(3, 2) for _ in range(4)])
    >>> params["weight"].shape, params["weight"].is_leaf
    (torch.Size([4, 2, 3]), True)
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Turn off running statistics in every BatchNorm of `root`, in place (vmap over a model
    whose BatchNorm would update shared buffers per sample), and return `root`."""
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root
