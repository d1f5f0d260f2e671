"""DataLoader in the main process: batching, shuffling, samplers, argument checks."""
import pytest

import ember_tensor as et
from ember_data import (BatchSampler, DataLoader, IterableDataset, SequentialSampler, TensorDataset,
                        get_worker_info)


def _dataset(n=10):
    return TensorDataset(et.arange(float(n)).reshape(n, 1), et.arange(n))


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kwargs, expected", [
    (dict(batch_size=4), [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]),
    (dict(batch_size=4, drop_last=True), [[0, 1, 2, 3], [4, 5, 6, 7]]),
    (dict(batch_size=3, sampler=[9, 0, 5, 1]), [[9, 0, 5], [1]]),
    (dict(batch_sampler=[[1, 2], [0]]), [[1, 2], [0]]),
    (dict(batch_sampler=BatchSampler(SequentialSampler(range(5)), 5, False)), [[0, 1, 2, 3, 4]]),
])
def test_batches(kwargs, expected):
    loader = DataLoader(_dataset(), **kwargs)
    batches = [y.tolist() for x, y in loader]
    assert batches == expected and len(loader) == len(expected)
    x, _ = next(iter(loader))
    assert x.shape[1:] == (1,)


def test_batch_size_none_yields_converted_samples():
    samples = list(DataLoader(_dataset(3), batch_size=None))
    assert [y.item() for _, y in samples] == [0, 1, 2] and samples[0][0].shape == (1,)


def test_shuffle_is_a_permutation_reproducible_from_a_generator():
    def order(seed):
        loader = DataLoader(_dataset(), batch_size=3, shuffle=True, generator=et.Generator().manual_seed(seed))
        return [i for _, y in loader for i in y.tolist()]

    assert sorted(order(0)) == list(range(10)) and order(0) == order(0) and order(0) != order(1)


def test_iterable_dataset_batches_and_len():
    loader = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]] and len(loader) == 3
    assert len(DataLoader(Stream(7), batch_size=3, drop_last=True)) == 2


def test_custom_collate_fn():
    loader = DataLoader(range(5), batch_size=2, collate_fn=lambda batch: sum(batch))
    assert list(loader) == [1, 5, 4]


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(num_workers=-1), ValueError, "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."),
    (dict(timeout=-1), ValueError, "timeout option should be non-negative"),
    (dict(prefetch_factor=2), ValueError, "prefetch_factor option could only be specified in multiprocessing"),
    (dict(persistent_workers=True), ValueError, "persistent_workers option needs num_workers > 0"),
    (dict(sampler=[0], shuffle=True), ValueError, "sampler option is mutually exclusive with shuffle"),
    (dict(batch_sampler=[[0]], batch_size=2), ValueError,
     "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last"),
    (dict(batch_size=None, drop_last=True), ValueError,
     "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"),
    (dict(multiprocessing_context="fork"), ValueError, "multiprocessing_context can only be used with multi-process loading"),
    (dict(num_workers=1, multiprocessing_context="nope"), ValueError,
     "multiprocessing_context option should specify a valid start method in"),
])
def test_argument_errors(kwargs, error, message):
    with pytest.raises(error) as info:
        DataLoader(_dataset(), **kwargs)
    assert message in str(info.value)


def test_iterable_dataset_refuses_shuffle_and_sampler():
    with pytest.raises(ValueError, match="expected unspecified shuffle option, but got shuffle=True"):
        DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(3), sampler=[0])


def test_pin_memory_warns_without_accelerator(monkeypatch):
    import ember_data.dataloader
    monkeypatch.setattr(ember_data.dataloader, "pinning_available", lambda: False)
    with pytest.warns(UserWarning, match="no accelerator is found"):
        loader = DataLoader(_dataset(), batch_size=5, pin_memory=True)
    assert len(list(loader)) == 2


def test_tensor_dataset_gather_path_equals_sample_by_sample_collation():
    from ember_data import default_collate
    x = et.arange(60.0).reshape(3, 20).t()  # non-contiguous rows
    y = et.arange(20)  # 0-d samples
    ds = TensorDataset(x, y)
    generator_seed = 3
    fast = list(DataLoader(ds, batch_size=6, shuffle=True, generator=et.Generator().manual_seed(generator_seed)))
    slow = list(DataLoader(ds, batch_size=6, shuffle=True, generator=et.Generator().manual_seed(generator_seed),
                           collate_fn=lambda batch: default_collate(batch)))
    assert len(fast) == len(slow) == 4
    for (fx, fy), (sx, sy) in zip(fast, slow):
        assert fx.tolist() == sx.tolist() and fy.tolist() == sy.tolist()
        assert fx.dtype == sx.dtype and fy.dtype == sy.dtype == et.int64
