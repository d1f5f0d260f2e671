"""``torch.distributed.checkpoint.state_dict``: a model's and its optimizers' state as a
distributed checkpoint sees it, and back.

For a model sharded with ``fully_shard``, each parameter appears as a ShardedChunk whose
``local`` is the sharded parameter itself, so ``checkpoint.load`` of that dict writes
straight into the model; the optimizer's state shaped like a parameter (Adam's
``exp_avg``) appears the same way, wrapping the live state tensor; other values as they
are. Optimizer state is keyed by the parameters' names (``"0.weight"``), not by index, so
a checkpoint loads into any sharding of the same model, and into an unsharded one.
With ``StateDictOptions(full_state_dict=True)`` the chunks are all-gathered into full
tensors (``cpu_offload=True`` as well: rank 0 only, the others get ``{}``, as PyTorch).
"""

from dataclasses import dataclass

import ember_tensor

from .._group import is_initialized, resolve
from .._sharded_chunk import ShardedChunk

__all__ = ["StateDictOptions", "get_model_state_dict", "set_model_state_dict", "get_optimizer_state_dict",
           "set_optimizer_state_dict", "get_state_dict", "set_state_dict"]


@dataclass
class StateDictOptions:
    """Options of the get/set functions: ``full_state_dict`` (full tensors instead of
    chunks), ``cpu_offload`` (with ``full_state_dict``: rank 0 only), ``strict``,
    ``ignore_frozen_params``."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False


def _options(options):
    options = options or StateDictOptions()
    if options.broadcast_from_rank0:
        raise NotImplementedError("ember: broadcast_from_rank0 is not provided; give every rank the full state dict "
                                  "(or load a distributed checkpoint, which reshards)")
    return options


def _only_rank0_keeps(options):
    """PyTorch: full_state_dict with cpu_offload leaves the state on rank 0 only."""
    return options.full_state_dict and options.cpu_offload and is_initialized() and resolve(None).rank() != 0


def _export(param, value, full):
    """A state value as saved: a parameter's chunk (or state shaped like it) as a
    ShardedChunk, or all-gathered into a full tensor; anything else as it is."""
    shape = getattr(param, "_fsdp_global_shape", None)
    if not isinstance(value, ember_tensor.Tensor):
        return value
    if shape is None or value.dim() == 0 or tuple(value.shape) != tuple(param.shape):
        return value.detach()
    if full:
        local = value.detach().cpu().contiguous().numpy()
        return ember_tensor.from_numpy(param._fsdp_unit.gather_param(param._fsdp_spec, local))
    return ShardedChunk(value.detach(), shape, param._fsdp_row_offset)


def _import(target, value):
    """The part of a saved ``value`` that ``target`` (a parameter's chunk, or state shaped
    like it) holds: a ShardedChunk's local rows, or this rank's rows of a full tensor."""
    if isinstance(value, ShardedChunk):
        return value.local
    shape = getattr(target, "_fsdp_global_shape", None)
    if (shape is not None and isinstance(value, ember_tensor.Tensor) and value.dim()
            and tuple(value.shape) == tuple(shape) and tuple(value.shape) != tuple(target.shape)):
        start = target._fsdp_row_offset
        return value[start:start + target.shape[0]]
    return value


def get_model_state_dict(model, *, submodules=None, options=None):
    """The model's state: ShardedChunks for ``fully_shard``'s parameters (or full tensors
    with ``full_state_dict=True``), tensors otherwise.

    >>> # dcp.save(get_model_state_dict(model), checkpoint_id="ckpt")
    """
    options = _options(options)
    result = {}
    for key, value in model.state_dict(keep_vars=True).items():
        if options.ignore_frozen_params and not value.requires_grad:
            continue
        result[key] = _export(value, value, options.full_state_dict)
    return {} if _only_rank0_keeps(options) else result


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Load ``model_state_dict`` (ShardedChunks or full tensors) into the model's (sharded)
    parameters and buffers; returns ``(missing_keys, unexpected_keys)``."""
    options = _options(options)
    own = model.state_dict(keep_vars=True)
    missing = [k for k in own if k not in model_state_dict]
    unexpected = [k for k in model_state_dict if k not in own]
    if options.strict and (missing or unexpected):
        raise RuntimeError(f"Error(s) in loading state_dict: missing keys {missing}, unexpected keys {unexpected}")
    for key, target in own.items():
        if key not in model_state_dict:
            continue
        value = _import(target, model_state_dict[key])
        if value is not target:
            target.detach().copy_(ember_tensor.as_tensor(value))  # detach(): the parameter's memory, no graph
    return missing, unexpected


def _optimizers(optimizers):
    return list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]


def _init_optim_state(optim):
    """Make a fresh optimizer's state exist (it is created lazily by the first step), so
    that a checkpoint has tensors to load into: one step with zero gradients and lr 0
    leaves the parameters as they are, as PyTorch does."""
    if optim.state or any(p.grad is not None for g in optim.param_groups for p in g["params"]):
        return
    for group in optim.param_groups:
        for p in group["params"]:
            if p.requires_grad:
                p.grad = ember_tensor.zeros_like(p)
    lrs = [group["lr"] for group in optim.param_groups]
    for group in optim.param_groups:
        group["lr"] = 0.0
    optim.step()
    for group, lr in zip(optim.param_groups, lrs):
        group["lr"] = lr
    optim.zero_grad(set_to_none=True)


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """The optimizers' state keyed by parameter name: ``{"state": {name: {...}},
    "param_groups": [{..., "params": [names]}]}``, with ShardedChunks for state shaped
    like a sharded parameter (full tensors with ``full_state_dict=True``).

    A fresh optimizer's state is created first (a step with zero gradients and lr 0).
    """
    options = _options(options)
    name_of = {id(p): name for name, p in model.named_parameters()}
    state, groups = {}, []
    for optim in _optimizers(optimizers):
        _init_optim_state(optim)
        for group in optim.param_groups:
            saved = {k: v for k, v in group.items() if k != "params"}
            saved["params"] = [name_of[id(p)] for p in group["params"]]
            groups.append(saved)
            for p in group["params"]:
                if p in optim.state:
                    state[name_of[id(p)]] = {k: _export(p, v, options.full_state_dict)
                                             for k, v in optim.state[p].items()}
    return {} if _only_rank0_keeps(options) else {"state": state, "param_groups": groups}


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    """Load a state dict of ``get_optimizer_state_dict`` (saved with any sharding, chunks
    or full tensors) into the optimizers."""
    _options(options)
    param_of = dict(model.named_parameters())
    name_of = {id(p): name for name, p in param_of.items()}
    saved_state, saved_groups = optim_state_dict["state"], optim_state_dict["param_groups"]
    for optim in _optimizers(optimizers):
        state, groups = {}, []
        for group in optim.param_groups:
            names = [name_of[id(p)] for p in group["params"]]
            saved = next((g for g in saved_groups if set(names) <= set(g["params"])), None)
            if saved is None:
                raise ValueError(f"the optimizer state dict has no parameter group holding {names}")
            loaded = {k: _like(group.get(k), v) for k, v in saved.items() if k != "params"}
            # indices in this optimizer's own order, which load_state_dict pairs with its params
            loaded["params"] = []
            for p, name in zip(group["params"], names):
                index = sum(len(g["params"]) for g in groups) + len(loaded["params"])
                loaded["params"].append(index)
                if name in saved_state:
                    state[index] = {k: _import(p, v) for k, v in saved_state[name].items()}
            groups.append(loaded)
        optim.load_state_dict({"state": state, "param_groups": groups})


def _like(current, saved):
    """A hyper-parameter as the optimizer holds it (a checkpoint's JSON gives lists for tuples)."""
    return tuple(saved) if isinstance(current, tuple) and isinstance(saved, list) else saved


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    """``(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))``.

    >>> # model_sd, optim_sd = get_state_dict(model, optim)
    >>> # dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id="ckpt")
    """
    return (get_model_state_dict(model, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """Load both; returns the model's ``(missing_keys, unexpected_keys)``."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys
