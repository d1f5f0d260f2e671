"""ember-data: datasets and loading (``torch.utils.data``).

Datasets (map-style and iterable) and their combinators, samplers (including
DistributedSampler, in ``ember_data.distributed``), ``default_collate``, and a
DataLoader whose workers are processes that return batches through shared memory.
Loaders for MNIST/FashionMNIST, CIFAR-10/100, image folders and the bundled 8x8 digits
live in ``ember_data.datasets``.
"""

import ember_autograd
import ember_tensor
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-data {__version__}"
check_layers(__file__, _NEEDED_BY)

from ._collate import default_collate, default_convert  # noqa: E402 -- after the version checks
from ._worker import WorkerInfo, get_worker_info  # noqa: E402
from .dataloader import DataLoader  # noqa: E402
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset,  # noqa: E402
                      TensorDataset, random_split)
from .distributed import DistributedSampler  # noqa: E402
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,  # noqa: E402
                      WeightedRandomSampler)

__all__ = [
    "DataLoader", "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
    "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
    "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
    "default_collate", "default_convert", "get_worker_info", "WorkerInfo",
]
