"""FSDP's configuration types (``torch.distributed.fsdp.api``): sharding strategies,
mixed precision, offload and state-dict settings."""

import enum
from dataclasses import dataclass

__all__ = ["ShardingStrategy", "BackwardPrefetch", "MixedPrecision", "CPUOffload", "StateDictType",
           "StateDictConfig", "FullStateDictConfig", "ShardedStateDictConfig", "LocalStateDictConfig",
           "StateDictSettings", "MixedPrecisionPolicy", "OffloadPolicy", "CPUOffloadPolicy", "OptimStateDictConfig",
           "FullOptimStateDictConfig", "ShardedOptimStateDictConfig", "LocalOptimStateDictConfig"]


class ShardingStrategy(enum.Enum):
    """How parameters, gradients and optimizer state are split over the ranks.

    FULL_SHARD: all three sharded; parameters gathered for forward, freed after it, and
    gathered again for backward. SHARD_GRAD_OP: parameters stay gathered from forward
    through backward. NO_SHARD: every rank keeps everything (DDP). HYBRID_SHARD:
    FULL_SHARD within a node, replicated across nodes.
    """

    FULL_SHARD = 1
    SHARD_GRAD_OP = 2
    NO_SHARD = 3
    HYBRID_SHARD = 4
    _HYBRID_SHARD_ZERO2 = 5


class BackwardPrefetch(enum.Enum):
    """When backward posts the next unit's all-gather: before the current unit's backward
    (BACKWARD_PRE) or after its reduce-scatter (BACKWARD_POST)."""

    BACKWARD_PRE = 1
    BACKWARD_POST = 2


class StateDictType(enum.Enum):
    """What ``state_dict()`` of an FSDP model returns: full tensors, or this rank's shards."""

    FULL_STATE_DICT = 1
    LOCAL_STATE_DICT = 2
    SHARDED_STATE_DICT = 3


@dataclass
class MixedPrecision:
    """Compute in ``param_dtype``, reduce gradients in ``reduce_dtype``; the sharded
    parameters (and so the optimizer) stay in their own dtype."""

    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = ()


@dataclass
class CPUOffload:
    """Keep sharded parameters on the CPU (ember's FSDP shards live in host memory anyway)."""

    offload_params: bool = False


@dataclass
class StateDictConfig:
    """Base of the state-dict settings."""

    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    """Full tensors on every rank, or on rank 0 only (``rank0_only``; the others get ``{}``)."""

    rank0_only: bool = False


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    """Each rank's shards, for ``torch.distributed.checkpoint``."""

    _use_dtensor: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    """The flat shards as they are (``_flat_param`` of each unit, this rank's padded shard)."""


@dataclass
class OptimStateDictConfig:
    """Base of the optimizer state-dict settings."""

    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    """Full optimizer state on every rank, or on rank 0 only (``rank0_only``; the others get ``{}``)."""

    rank0_only: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    """Each rank's chunks of the optimizer state (ShardedChunks), for ``torch.distributed.checkpoint``."""

    _use_dtensor: bool = False


@dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    """The optimizer state as it is, keyed by the flat shards."""

    offload_to_cpu: bool = False


@dataclass
class StateDictSettings:
    """What ``state_dict_type`` returns: the type and config in force."""

    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: object = None


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """``fully_shard``'s mixed precision: gather in ``param_dtype``, reduce in ``reduce_dtype``,
    cast the outputs to ``output_dtype``, and the inputs to ``param_dtype``."""

    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """No offloading (the default of ``fully_shard``)."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """Keep shards on the CPU between uses (ember's shards are host memory already)."""

    pin_memory: bool = True
