"""``torch.distributed.checkpoint.state_dict``: a model's state dict as a distributed
checkpoint sees it, and back.

For a model sharded with ``fully_shard``, each parameter appears as a ShardedChunk whose
``local`` is the sharded parameter itself, so ``checkpoint.load`` of that dict writes
straight into the model; other parameters and buffers appear as tensors.
"""

from dataclasses import dataclass

import ember_tensor

from .._sharded_chunk import ShardedChunk

__all__ = ["StateDictOptions", "get_model_state_dict", "set_model_state_dict"]


@dataclass
class StateDictOptions:
    """Options of get/set_model_state_dict (ember provides the sharded form only)."""

    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False


def _check(options):
    if options is not None and (options.full_state_dict or options.broadcast_from_rank0):
        raise NotImplementedError("ember's get/set_model_state_dict give the sharded form only: for full tensors "
                                  "load the checkpoint into full tensors (checkpoint.load reshards)")


def get_model_state_dict(model, *, submodules=None, options=None):
    """The model's state: ShardedChunks for ``fully_shard``'s parameters, tensors otherwise.

    >>> # dcp.save(get_model_state_dict(model), checkpoint_id="ckpt")
    """
    _check(options)
    result = {}
    for key, value in model.state_dict(keep_vars=True).items():
        if options is not None and options.ignore_frozen_params and not value.requires_grad:
            continue
        shape = getattr(value, "_fsdp_global_shape", None)
        if shape is not None:
            result[key] = ShardedChunk(value, shape, value._fsdp_row_offset)
        else:
            result[key] = value.detach()
    return result


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Load ``model_state_dict`` (ShardedChunks or full tensors) into the model's (sharded)
    parameters and buffers; returns ``(missing_keys, unexpected_keys)``."""
    _check(options)
    own = model.state_dict(keep_vars=True)
    missing = [k for k in own if k not in model_state_dict]
    unexpected = [k for k in model_state_dict if k not in own]
    if (options is None or options.strict) and (missing or unexpected):
        raise RuntimeError(f"Error(s) in loading state_dict: missing keys {missing}, unexpected keys {unexpected}")
    for key, target in own.items():
        if key not in model_state_dict:
            continue
        value = model_state_dict[key]
        if isinstance(value, ShardedChunk):
            value = value.local
        elif getattr(target, "_fsdp_global_shape", None) is not None:
            start = target._fsdp_row_offset
            value = value[start:start + target.shape[0]]
        if value is not target:
            target.detach().copy_(ember_tensor.as_tensor(value))  # detach(): the parameter's memory, no graph
    return missing, unexpected

