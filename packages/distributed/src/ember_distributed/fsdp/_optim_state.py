"""Optimizer state dicts of the wrapper API: ``FSDP.optim_state_dict`` and
``FSDP.optim_state_dict_to_load``.

The optimizer steps one flat shard per unit, so its state (Adam's ``exp_avg``...) is
flat shards too. Saved, it is keyed by the original parameters' names, as PyTorch's:
``{"state": {"0.weight": {"step": ..., "exp_avg": ...}}, "param_groups": [{...,
"params": ["0.weight", ...]}]}``, each flat state cut into the parameters' chunks
(SHARDED_STATE_DICT: ShardedChunks) or all-gathered into full tensors (FULL_STATE_DICT).
Loading packs the chunks (or this rank's rows of full tensors) back into flat shards,
so a state saved with one sharding, or by a plain model, loads into another.
"""

import numpy as np

import ember_tensor

from .._group import resolve
from .._sharded_chunk import ShardedChunk
from .api import StateDictType

__all__ = []


def _flat_state(value, flat):
    """True for state shaped like the flat shard (cut per parameter); False for scalars (``step``)."""
    return isinstance(value, ember_tensor.Tensor) and value.dim() == 1 and tuple(value.shape) == tuple(flat.shape)


def optim_state_dict(model, optim):
    """The optimizer's state keyed by parameter name, in the model's ``state_dict_type``
    (FULL_STATE_DICT: full tensors, ``rank0_only`` from ``FullOptimStateDictConfig``;
    SHARDED_STATE_DICT: ShardedChunks; LOCAL_STATE_DICT: the optimizer's own state dict)."""
    settings = model._state_dict_settings
    if settings.state_dict_type is StateDictType.LOCAL_STATE_DICT:
        return optim.state_dict()
    full = settings.state_dict_type is StateDictType.FULL_STATE_DICT
    names = {id(flat): [model._qualified[(id(spec.module), spec.name)] for spec in unit.specs]
             for _, unit, flat in model._units}
    units = {id(flat): unit for _, unit, flat in model._units}
    state, groups = {}, []
    for group in optim.param_groups:
        saved = {k: v for k, v in group.items() if k != "params"}
        saved["params"] = [name for flat in group["params"] for name in names[id(flat)]]
        groups.append(saved)
        for flat in group["params"]:
            if flat not in optim.state:
                continue
            unit = units[id(flat)]
            per_param = [{} for _ in unit.specs]
            for key, value in optim.state[flat].items():
                if not _flat_state(value, flat):
                    for entry in per_param:
                        entry[key] = value.detach().clone() if isinstance(value, ember_tensor.Tensor) else value
                    continue
                array = value.detach().cpu().numpy()
                if full:
                    parts = [ember_tensor.from_numpy(np.array(a)) for a in unit.gather_full(unit.segments(array))]
                else:
                    parts = [ShardedChunk(ember_tensor.from_numpy(np.array(chunk)), spec.shape, unit.rank * spec.chunk)
                             for spec, chunk in zip(unit.specs, unit.unpack(array))]
                for entry, part in zip(per_param, parts):
                    entry[key] = part
            state.update(zip(names[id(flat)], per_param))
    config = settings.optim_state_dict_config
    if full and config is not None and getattr(config, "rank0_only", False) and resolve(None).rank() != 0:
        return {}
    return {"state": state, "param_groups": groups}


def optim_state_dict_to_load(model, optim, saved):
    """``saved`` (of ``optim_state_dict``, with any sharding) as the optimizer's own state
    dict, ready for ``optim.load_state_dict``."""
    if model._state_dict_settings.state_dict_type is StateDictType.LOCAL_STATE_DICT:
        return saved
    units = {id(flat): unit for _, unit, flat in model._units}
    state, groups, index = {}, [], 0
    for group in optim.param_groups:
        names = [model._qualified[(id(spec.module), spec.name)] for flat in group["params"]
                 for spec in units[id(flat)].specs]
        match = next((g for g in saved["param_groups"] if set(names) <= set(g["params"])), None)
        if match is None:
            raise ValueError(f"the optimizer state dict has no parameter group holding {names}")
        loaded = {k: (tuple(v) if isinstance(group.get(k), tuple) and isinstance(v, list) else v)
                  for k, v in match.items() if k != "params"}
        loaded["params"] = []
        for flat in group["params"]:
            unit = units[id(flat)]
            entries = [saved["state"].get(model._qualified[(id(spec.module), spec.name)]) for spec in unit.specs]
            loaded["params"].append(index)
            if all(entry is not None for entry in entries):
                state[index] = {key: _pack(unit, spec_values, flat)
                                for key, spec_values in ((k, [e[k] for e in entries]) for k in entries[0])}
            index += 1
        groups.append(loaded)
    return {"state": state, "param_groups": groups}


def _pack(unit, values, flat):
    """One state entry for a flat shard from the parameters' saved values: chunks or full
    tensors of each parameter, or a scalar (the same for all, e.g. ``step``)."""
    first = values[0]
    if not isinstance(first, (ember_tensor.Tensor, ShardedChunk)) or (
            isinstance(first, ember_tensor.Tensor) and first.dim() == 0):
        return first
    chunks = []
    for spec, value in zip(unit.specs, values):
        if isinstance(value, ShardedChunk):
            chunks.append(value.local.detach().cpu().numpy())
        else:
            chunks.append(unit.shard_of(spec, value.detach().cpu().numpy()))
    return ember_tensor.from_numpy(unit.pack(chunks, dtype=flat.dtype.np))
