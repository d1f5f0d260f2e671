"""DataLoader with worker processes: same batches as in-process loading, per-worker
seeding and sharding, and the robustness contract (worker exception, killed worker,
timeout, early exit) with no leaked processes or shared-memory segments.

Small datasets and short timeouts: the machine running these may have 2 busy cores.
"""
import glob
import mmap
import os
import signal
import time

import multiprocessing
import numpy as np
import pytest

import ember_tensor as et
from ember_data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info
from ember_data import _shared_memory


def _dataset(n=20):
    return TensorDataset(et.arange(float(n * 3)).reshape(n, 3), et.arange(n))


def _segments():
    return set(glob.glob(os.path.join(_shared_memory.SHM_DIR, "ember_dl_*")))


def _children():
    return {p.pid for p in multiprocessing.active_children()}


@pytest.fixture(autouse=True)
def no_leaks():
    before_segments, before_children = _segments(), _children()
    yield
    deadline = time.monotonic() + 10
    while _children() - before_children and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _children() - before_children == set(), "worker processes outlived their loader"
    assert _segments() - before_segments == set(), "shared-memory segments were leaked"


class Squares(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        return {"x": et.tensor([float(i), float(i * i)]), "i": i, "name": f"s{i}"}


@pytest.mark.parametrize("num_workers", [1, 2])
def test_workers_give_the_same_batches_as_the_main_process(num_workers):
    ds = Squares()
    expected = list(DataLoader(ds, batch_size=5))
    got = list(DataLoader(ds, batch_size=5, num_workers=num_workers))
    assert len(got) == len(expected) == 3
    for a, b in zip(got, expected):
        assert a["x"].tolist() == b["x"].tolist() and a["i"].tolist() == b["i"].tolist() and a["name"] == b["name"]


def test_batches_arrive_in_shared_memory_not_copies():
    loader = DataLoader(_dataset(), batch_size=4, num_workers=2)
    x, y = next(iter(loader))
    # The batch's array is a view on a memory mapping of the segment, not an array that
    # owns unpickled bytes.
    base = x.numpy()
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)
    assert x.tolist()[0] == [0.0, 1.0, 2.0] and y.tolist() == [0, 1, 2, 3]


def test_shuffled_epoch_with_workers_is_a_permutation():
    loader = DataLoader(_dataset(), batch_size=3, shuffle=True, num_workers=2,
                        generator=et.Generator().manual_seed(0))
    seen = [i for _, y in loader for i in y.tolist()]
    assert sorted(seen) == list(range(20))


class WorkerFacts(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return info.id, info.num_workers, info.seed, et.rand(1).item()


def test_worker_info_and_per_worker_seeds():
    loader = DataLoader(WorkerFacts(), batch_size=1, num_workers=2, generator=et.Generator().manual_seed(5))
    facts = [(int(a), int(b), int(c), float(d)) for a, b, c, d in loader]
    assert {f[0] for f in facts} == {0, 1} and all(f[1] == 2 for f in facts)
    seeds = {f[0]: f[2] for f in facts}
    assert seeds[1] == seeds[0] + 1
    # The same generator seed gives the same worker seeds, hence the same random draws.
    again = DataLoader(WorkerFacts(), batch_size=1, num_workers=2, generator=et.Generator().manual_seed(5))
    assert [(int(a), float(d)) for a, _, _, d in again] == [(f[0], f[3]) for f in facts]
    assert get_worker_info() is None


class Shards(IterableDataset):
    def __iter__(self):
        info = get_worker_info()
        return iter(range(info.id, 10, info.num_workers))


def test_iterable_dataset_sharded_by_worker_info():
    items = sorted(i for batch in DataLoader(Shards(), batch_size=2, num_workers=2) for i in batch.tolist())
    assert items == list(range(10))


def test_worker_init_fn_runs_in_each_worker():
    class Marker(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return os.environ.get("EMBER_TEST_WORKER_MARK", "")

    def init(worker_id):
        os.environ["EMBER_TEST_WORKER_MARK"] = f"w{worker_id}"

    marks = sorted(m for batch in DataLoader(Marker(), batch_size=1, num_workers=2, worker_init_fn=init) for m in batch)
    assert marks == ["w0", "w1"]


class Failing(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise KeyError(f"bad sample {i}")
        return i


def test_worker_exception_is_reraised_with_the_worker_traceback():
    with pytest.raises(KeyError) as info:
        list(DataLoader(Failing(), batch_size=2, num_workers=2))
    text = str(info.value)
    assert "Caught KeyError in DataLoader worker process" in text
    assert "bad sample 5" in text and "in __getitem__" in text and "Traceback" in text


class SelfKilling(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return i


def test_killed_worker_raises_promptly_naming_it():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker \d \(pid \d+\) is killed by signal: Killed"):
        list(DataLoader(SelfKilling(), batch_size=1, num_workers=2))
    assert time.monotonic() - start < 30


class Slow(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(30 if i == 2 else 0)
        return i


def test_timeout_raises_instead_of_hanging():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1 seconds"):
        list(DataLoader(Slow(), batch_size=1, num_workers=1, timeout=1))
    assert time.monotonic() - start < 20


def test_early_break_and_del_shut_workers_down():
    loader = DataLoader(_dataset(40), batch_size=2, num_workers=2)
    for i, _ in enumerate(loader):
        if i == 1:
            break
    it = iter(loader)
    next(it)
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    del it
    assert not any(w.is_alive() for w in workers)
    # (the fixture checks that no process or segment is left over)


def test_persistent_workers_serve_several_epochs():
    loader = DataLoader(_dataset(9), batch_size=4, num_workers=2, persistent_workers=True)
    first = [y.tolist() for _, y in loader]
    workers = list(loader._iterator._workers)
    for i, _ in enumerate(loader):  # an epoch broken off midway
        break
    second = [y.tolist() for _, y in loader]
    assert first == second == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    assert loader._iterator._workers == workers and all(w.is_alive() for w in workers)
    loader._iterator._shutdown_workers()
    assert not any(w.is_alive() for w in workers)


def test_spawn_context_works_with_a_picklable_dataset():
    batches = list(DataLoader(_dataset(6), batch_size=3, num_workers=1, multiprocessing_context="spawn"))
    assert [y.tolist() for _, y in batches] == [[0, 1, 2], [3, 4, 5]]


def test_parallel_kernels_are_usable_in_forked_workers():
    big = et.ones(1 << 20)
    assert (big + big).sum().item() == 2 * (1 << 20)  # the parent has used its thread pool

    class Heavy(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            # One thread in a worker, as PyTorch sets: every kernel takes its serial path.
            assert et.get_num_threads() == 1, et.get_num_threads()
            return (et.ones(1 << 20) * 2).sum()

    assert [b.tolist() for b in DataLoader(Heavy(), batch_size=2, num_workers=1, timeout=60)] == [[2.0 * (1 << 20)] * 2]


_CTRL_C_SCRIPT = """
import os, sys, time
import ember_tensor as et
from ember_data import DataLoader, Dataset

class Slow(Dataset):
    def __len__(self):
        return 1000
    def __getitem__(self, i):
        time.sleep(0.05)
        return et.ones(3) * i

it = iter(DataLoader(Slow(), batch_size=2, num_workers=2))
next(it)
print(" ".join(str(w.pid) for w in it._workers), flush=True)
while True:
    next(it)
"""


def test_ctrl_c_in_the_main_process_leaves_no_worker_or_segment(tmp_path):
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", _CTRL_C_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ))
    worker_pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(worker_pids) == 2
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert "KeyboardInterrupt" in err
    deadline = time.monotonic() + 10
    alive = worker_pids
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in worker_pids if os.path.exists(f"/proc/{pid}") and
                 open(f"/proc/{pid}/stat").read().split()[2] != "Z"]
        time.sleep(0.05)
    assert alive == []
    assert glob.glob(os.path.join(_shared_memory.SHM_DIR, f"ember_dl_{proc.pid}_*")) == []


class Uneven(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        time.sleep(0.2 if i < 2 else 0)  # the first batch is the slowest
        return i


def test_out_of_order_delivery_yields_every_batch_once():
    batches = [b.tolist() for b in DataLoader(Uneven(), batch_size=2, num_workers=2, in_order=False)]
    assert sorted(batches) == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_iterable_dataset_without_batching_in_workers():
    items = sorted(int(x) for x in DataLoader(Shards(), batch_size=None, num_workers=2))
    assert items == list(range(10))
