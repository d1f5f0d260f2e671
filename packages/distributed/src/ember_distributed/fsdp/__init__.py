"""``torch.distributed.fsdp``: Fully Sharded Data Parallel.

Two APIs over one mechanism (``_unit.py``, ``_hooks.py``): the wrapper
``FullyShardedDataParallel(model, auto_wrap_policy=...)`` and the per-parameter
``fully_shard(module, mesh=...)``. Parameters, gradients and optimizer state are split
over the ranks; each unit's parameters are all-gathered for its forward and backward and
its gradients reduce-scattered, so training equals one process on the whole batch.
"""

from ._fully_shard import FSDPModule, fully_shard
from .api import (BackwardPrefetch, CPUOffload, CPUOffloadPolicy, FullOptimStateDictConfig, FullStateDictConfig,
                  LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision, MixedPrecisionPolicy, OffloadPolicy,
                  OptimStateDictConfig, ShardedOptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy,
                  StateDictConfig, StateDictSettings, StateDictType)
from .fully_sharded_data_parallel import FullyShardedDataParallel, ShardedChunk

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "BackwardPrefetch", "MixedPrecision", "CPUOffload",
           "StateDictType", "StateDictConfig", "FullStateDictConfig", "ShardedStateDictConfig",
           "LocalStateDictConfig", "StateDictSettings", "fully_shard", "FSDPModule", "MixedPrecisionPolicy",
           "OffloadPolicy", "CPUOffloadPolicy", "ShardedChunk", "OptimStateDictConfig", "FullOptimStateDictConfig",
           "ShardedOptimStateDictConfig", "LocalOptimStateDictConfig"]
