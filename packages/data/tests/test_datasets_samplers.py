"""Datasets, their combinators, random_split and every sampler (DistributedSampler included)."""
import collections

import pytest

import ember_tensor as et
from ember_data import (BatchSampler, ChainDataset, ConcatDataset, Dataset, DistributedSampler, IterableDataset,
                        RandomSampler, SequentialSampler, StackDataset, Subset, SubsetRandomSampler, TensorDataset,
                        WeightedRandomSampler, random_split)


class Stream(IterableDataset):
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)

    def __len__(self):
        return len(self.items)


def test_tensor_dataset_indexes_every_tensor_including_non_contiguous_and_0d_samples():
    x = et.arange(12.0).reshape(3, 4).t()  # non-contiguous: samples are its rows
    y = et.tensor([5, 6, 7, 8])
    ds = TensorDataset(x, y)
    assert len(ds) == 4
    sample_x, sample_y = ds[2]
    assert sample_x.tolist() == [2.0, 6.0, 10.0] and sample_y.dim() == 0 and sample_y.item() == 7
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(et.zeros(3), et.zeros(4))


def test_concat_dataset_and_plus():
    a, b = TensorDataset(et.arange(2)), TensorDataset(et.arange(10, 13))
    ds = a + b
    assert isinstance(ds, ConcatDataset) and len(ds) == 5 and ds.cumulative_sizes == [2, 5]
    assert [ds[i][0].item() for i in range(5)] == [0, 1, 10, 11, 12]
    assert ds[-1][0].item() == 12
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        ds[-6]
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([Stream([1])])


def test_chain_dataset_and_plus_on_iterables():
    ds = Stream([1, 2]) + Stream([3])
    assert isinstance(ds, ChainDataset) and list(ds) == [1, 2, 3] and len(ds) == 3


def test_subset_and_stack_dataset():
    base = [10, 11, 12, 13]
    assert [Subset(base, [3, 0])[i] for i in range(2)] == [13, 10]
    assert StackDataset([1, 2], ["a", "b"])[1] == (2, "b")
    assert StackDataset(x=[1, 2], y=["a", "b"])[0] == {"x": 1, "y": "a"}
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset([1], [1, 2])


def test_map_dataset_base_requires_getitem():
    with pytest.raises(NotImplementedError):
        Dataset()[0]


@pytest.mark.parametrize("lengths, sizes", [([3, 7], [3, 7]), ([0.5, 0.5], [5, 5]), ([0.33, 0.33, 0.34], [4, 3, 3])])
def test_random_split_sizes_partition_and_reproducibility(lengths, sizes):
    parts = random_split(range(10), lengths, generator=et.Generator().manual_seed(42))
    assert [len(p) for p in parts] == sizes
    assert sorted(i for p in parts for i in p) == list(range(10))
    again = random_split(range(10), lengths, generator=et.Generator().manual_seed(42))
    assert [list(p) for p in parts] == [list(p) for p in again]


def test_random_split_rejects_bad_lengths():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        random_split(range(10), [3, 3])


def test_sequential_and_random_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    order = list(RandomSampler(range(10), generator=et.Generator().manual_seed(0)))
    assert sorted(order) == list(range(10))
    assert order == list(RandomSampler(range(10), generator=et.Generator().manual_seed(0)))
    et.manual_seed(7)
    first = list(RandomSampler(range(10)))
    et.manual_seed(7)
    assert list(RandomSampler(range(10))) == first  # the global seed fixes the order
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=50))
    assert len(drawn) == 50 and set(drawn) <= {0, 1, 2}
    longer = list(RandomSampler(range(3), num_samples=7))
    assert len(longer) == 7 and collections.Counter(longer[:6]) == collections.Counter([0, 1, 2] * 2)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)


def test_subset_random_and_weighted_samplers():
    assert sorted(SubsetRandomSampler([5, 7, 9])) == [5, 7, 9]
    drawn = list(WeightedRandomSampler([0.0, 1.0, 0.0], num_samples=20))
    assert drawn == [1] * 20
    no_repeat = list(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False))
    assert sorted(no_repeat) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="weights should be a 1d sequence but given weights have shape"):
        WeightedRandomSampler([[1.0]], 1)


@pytest.mark.parametrize("drop_last, expected", [(False, [[0, 1, 2], [3, 4, 5], [6]]), (True, [[0, 1, 2], [3, 4, 5]])])
def test_batch_sampler(drop_last, expected):
    sampler = BatchSampler(SequentialSampler(range(7)), 3, drop_last)
    assert list(sampler) == expected and len(sampler) == len(expected)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value, but got batch_size=0"):
        BatchSampler(SequentialSampler(range(7)), 0, drop_last)


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (4, 4, False), (2, 3, False)])
def test_distributed_sampler_partitions_the_dataset(n, replicas, drop_last):
    shards = [list(DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last))
              for rank in range(replicas)]
    assert len({len(s) for s in shards}) == 1
    flat = sorted(i for s in shards for i in s)
    if drop_last:
        assert len(set(flat)) == len(flat) and len(flat) == n - n % replicas
    else:
        assert set(flat) == set(range(n)) and len(flat) == -(-n // replicas) * replicas


def test_distributed_sampler_shuffles_by_epoch_and_reads_environment(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    sampler = DistributedSampler(range(20), seed=3)
    assert (sampler.num_replicas, sampler.rank) == (2, 1)
    epoch0 = list(sampler)
    assert list(sampler) == epoch0
    sampler.set_epoch(1)
    assert list(sampler) != epoch0
    other = DistributedSampler(range(20), rank=0, seed=3)
    assert sorted(list(other) + epoch0) == list(range(20))


def test_distributed_sampler_errors(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    with pytest.raises(RuntimeError, match="WORLD_SIZE environment variable is not set"):
        DistributedSampler(range(4), rank=0)
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)


def test_distributed_sampler_matches_pytorch_without_shuffle():
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    for rank in range(3):
        ours = list(DistributedSampler(range(11), 3, rank, shuffle=False))
        assert ours == list(TorchSampler(range(11), 3, rank, shuffle=False))
