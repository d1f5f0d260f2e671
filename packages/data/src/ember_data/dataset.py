"""Datasets: the map-style and iterable protocols and the ways to combine and split them."""
import bisect
import itertools
import math
import warnings

import numpy as np

import ember_tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]


class Dataset:
    """A map-style dataset: ``dataset[i]`` is sample ``i``; subclasses define ``__getitem__``
    (and usually ``__len__``). ``a + b`` concatenates."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define ``__iter__``.

    In a DataLoader with workers every worker iterates its own copy: use
    ``get_worker_info()`` inside ``__iter__`` to give each worker a distinct shard.
    """

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``tuple(t[i] for t in tensors)``; all tensors share their first dimension.

    >>> import ember_tensor as torch
    >>> ds = TensorDataset(torch.arange(3), torch.tensor([10, 20, 30]))
    >>> len(ds), ds[1]
    (3, (tensor(1), tensor(20)))
    """

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)

    def _default_collated_batch(self, indices):
        """What ``default_collate([self[i] for i in indices])`` returns, gathered in one step.

        The DataLoader calls this instead of fetching sample by sample when the collate
        function is the default: one gather per tensor instead of a view per sample.
        """
        return [_gather_rows(t, indices) for t in self.tensors]


def _gather_rows(tensor, indices):
    if tensor.requires_grad:  # keep the graph, as stacking the samples would
        return ember_tensor.stack([tensor[i] for i in indices])
    if tensor.device.type == "cpu":
        rows = np.take(tensor.detach().numpy(), np.asarray(indices, dtype=np.int64), axis=0)
        return ember_tensor.from_numpy(rows)
    return tensor.detach()[ember_tensor.tensor(indices, dtype=ember_tensor.int64, device=tensor.device)]


class StackDataset(Dataset):
    """Zip datasets of equal length: samples are tuples (``*args``) or dicts (``**kwargs``)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) "
                             "like input/output, but both types are given.")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Several map-style datasets one after another.

    >>> len(ConcatDataset([[1, 2], [3, 4, 5]])), ConcatDataset([[1, 2], [3, 4, 5]])[3]
    (5, 4)
    """

    @staticmethod
    def cumsum(sequence):
        """Running totals of the datasets' lengths."""
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]


class ChainDataset(IterableDataset):
    """Several iterable datasets one after another, lazily."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        # A dataset that fetches a batch at once (``__getitems__``) keeps that ability.
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[idx] for idx in indices])
        return [self.dataset[self.indices[idx]] for idx in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping random subsets of the given lengths.

    ``lengths`` may be fractions summing to 1: each gets ``floor(frac * len)`` samples and
    the remainder is dealt round-robin, as PyTorch does.

    >>> import ember_tensor as torch
    >>> a, b = random_split(range(10), [0.7, 0.3], generator=torch.Generator().manual_seed(0))
    >>> len(a), len(b), sorted(list(a) + list(b)) == list(range(10))
    (7, 3, True)
    """
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(len(dataset) * frac)))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = ember_tensor.randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]
