"""Shared memory and torch.multiprocessing: `share_memory_`/`is_shared`, tensors sent
through a Queue or to a Process (fork and spawn) share the sender's pages, and `spawn`
reports a child's error as PyTorch does."""
import multiprocessing

import numpy as np
import pytest

import ember_tensor as et
import ember_tensor.multiprocessing as mp


def test_share_memory_moves_the_storage_in_place():
    x = et.arange(12.0).reshape(3, 4).t()
    before = x.tolist()
    assert not x.is_shared()
    assert x.share_memory_() is x
    assert x.is_shared() and x.tolist() == before and x.stride() == (1, 4)
    pointer = x.data_ptr()
    x.share_memory_()  # once only
    assert x.data_ptr() == pointer
    view = x[1:]  # a view taken afterwards is in the same memory
    view.fill_(7.0)
    assert view.is_shared() and x[1:].tolist() == view.tolist()


def test_empty_and_integer_tensors_share():
    for t in (et.zeros(0), et.ones(0, 3, dtype=et.int64), et.tensor(5, dtype=et.uint8), et.ones(3, dtype=et.bool)):
        values = t.tolist()
        assert t.share_memory_().is_shared() and t.tolist() == values


def _add_rank_and_reply(rank, shared, replies, done):
    shared[rank].add_(rank + 1)
    replies.put(et.full((2,), float(rank)))
    done.wait()  # a sender lives until what it sent is mapped, as PyTorch requires


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_children_write_into_the_parents_tensor(method):
    context = mp.get_context(method)
    shared = et.zeros(2, 3).share_memory_()
    replies, done = context.Queue(), context.Event()
    children = [context.Process(target=_add_rank_and_reply, args=(rank, shared, replies, done)) for rank in range(2)]
    for child in children:
        child.start()
    received = sorted(replies.get(timeout=60).tolist() for _ in children)
    done.set()
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    assert shared.tolist() == [[1.0] * 3, [2.0] * 3]
    assert received == [[0.0, 0.0], [1.0, 1.0]]


def test_a_tensor_put_on_a_queue_arrives_shared():
    queue = mp.get_context("fork").SimpleQueue()
    sent = et.arange(6, dtype=et.int32)[::2]
    queue.put(sent)
    received = queue.get()
    assert sent.is_shared() and received.is_shared()
    assert received.tolist() == [0, 2, 4] and received.dtype is et.int32
    received.fill_(9)  # the same pages
    assert sent.tolist() == [9, 9, 9]


def _work(rank, out):
    out[rank] = rank * 10


def _fail(rank):
    if rank == 1:
        raise ValueError("rank one fails")


def _exit(rank):
    raise SystemExit(3)


def test_spawn_runs_every_rank():
    out = et.zeros(3).share_memory_()
    assert mp.spawn(_work, args=(out,), nprocs=3) is None
    assert out.tolist() == [0.0, 10.0, 20.0]
    context = mp.start_processes(_work, args=(out,), nprocs=2, join=False, start_method="fork")
    assert len(context.pids()) == 2
    while not context.join():
        pass


def test_spawn_reports_a_childs_exception_and_exit():
    with pytest.raises(mp.ProcessRaisedException, match="(?s)-- Process 1 terminated with the following error:.*"
                                                        "ValueError: rank one fails") as info:
        mp.spawn(_fail, nprocs=2, start_method="spawn")
    assert info.value.error_index == 1
    with pytest.raises(mp.ProcessExitedException, match="^process 0 terminated with exit code 3$"):
        mp.start_processes(_exit, nprocs=1, start_method="fork")


def test_the_multiprocessing_api_is_all_there():
    assert set(multiprocessing.__all__) <= set(mp.__all__)
    assert mp.Queue is multiprocessing.Queue and mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_system")
    mp.set_sharing_strategy("file_descriptor" if "file_descriptor" in mp.get_all_sharing_strategies() else "file_system")
    assert np.array_equal(et.ones(2).share_memory_().numpy(), [1.0, 1.0])
