"""``torch.nn.parallel`` for ember: DataParallel and its scatter/gather/replicate pieces.

DistributedDataParallel lives in ember_distributed (``ember.nn.parallel`` users import it
from ``ember.distributed`` paths), since nn never imports its sibling packages.
"""
from .data_parallel import DataParallel, data_parallel
from .replicate import replicate
from .scatter_gather import gather, scatter, scatter_kwargs

__all__ = ["DataParallel", "data_parallel", "replicate", "scatter", "scatter_kwargs", "gather"]
