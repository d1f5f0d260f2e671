"""DistributedSampler (``torch.utils.data.distributed``): each process gets its own shard.

The rank and world size come from the arguments or from the ``RANK`` and ``WORLD_SIZE``
environment variables every launcher sets; ember-data never imports ember-distributed.
"""
import math
import os

import ember_tensor

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _from_environment(name, what):
    value = os.environ.get(name)
    if value is None:
        raise RuntimeError(
            f"DistributedSampler: no {what} given and the {name} environment variable is not set; "
            f"pass {'num_replicas' if name == 'WORLD_SIZE' else 'rank'}= or launch with a tool that sets {name}")
    return int(value)


class DistributedSampler(Sampler):
    """Indices for replica ``rank`` of ``num_replicas``: padded (or cut, with ``drop_last``)
    to a multiple of ``num_replicas``, then every ``num_replicas``-th from ``rank``.

    With ``shuffle`` the permutation is seeded by ``seed + epoch``: call ``set_epoch``
    every epoch, or every epoch sees the same order.

    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _from_environment("WORLD_SIZE", "num_replicas")
        if rank is None:
            rank = _from_environment("RANK", "rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            g = ember_tensor.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = ember_tensor.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch that seeds the shuffle (the same on every replica)."""
        self.epoch = epoch
