"""ember's CPU worker pool (`_backends/cpu/pool.py`): the workers that run the other parts
of a split kernel spin for their next part, then sleep; every part runs once, at once with
the caller's, errors reach the caller, and a busy pool, a nested split or a forked child
never deadlocks."""
import gc
import os
import sys
import threading
import time
import weakref

import numpy as np
import pytest

from ember_tensor._backends.cpu import pool as cpu_pool
from ember_tensor._backends.cpu import threads as cpu_threads
from ember_tensor._backends.cpu.kernels.spin import wait_for_change


def _pool(workers=2):
    return cpu_pool.shared(workers, cpu_threads._mark_worker)


def test_wait_for_change_sees_another_threads_store():
    counters = np.zeros(16, dtype=np.int64)
    assert wait_for_change(counters, 0, 0, 100, 0) == 0  # nobody bumps it: the reads run out
    counters[3] = 5
    assert wait_for_change(counters, 3, 0, 1, 0) == 5
    bump = threading.Timer(0.02, lambda: counters.__setitem__(0, 7))
    bump.start()
    # Spins (GIL released) until the timer's thread stores: an atomic load each read.
    value = 0
    deadline = time.monotonic() + 10
    while value == 0 and time.monotonic() < deadline:
        value = wait_for_change(counters, 0, 0, 1 << 20, 10)
    bump.join()
    assert value == 7


def test_parts_run_at_once_on_their_own_threads_in_order():
    pool = _pool(3)
    meet = threading.Barrier(3, timeout=10)  # passes only if the three parts run at once

    def part(i):
        meet.wait()
        return i, threading.get_ident(), getattr(cpu_threads._in_worker, "active", False)

    results = pool.run([lambda: part(1), lambda: part(2)], lambda: part(0))
    assert [r[0] for r in results] == [0, 1, 2]
    assert len({r[1] for r in results}) == 3
    assert [r[2] for r in results] == [False, True, True]  # workers run kernels serially


def test_a_part_and_its_arguments_are_not_kept_after_it_ran():
    # A worker waiting for its next part used to keep the last one (and so its arrays:
    # a result the caller had dropped stayed in memory until the next split).
    pool = _pool(2)
    array = np.ones(1000)
    ref = weakref.ref(array)

    def part(a=array):
        return float(a.sum())

    assert pool.run([part], lambda: 0.0) == [0.0, 1000.0]
    del part, array
    gc.collect()
    assert ref() is None


def test_workers_asleep_are_woken():
    pool = _pool(2)
    assert pool.run([lambda: 1], lambda: 0) == [0, 1]
    deadline = time.monotonic() + 10  # past the idle spin (longer on a busy machine: it yields)
    while not any(pool._sleeping) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert any(pool._sleeping)  # the worker sleeps on the condition variable
    assert pool.run([lambda: 1], lambda: 0) == [0, 1]
    caller_sleeps = pool.run([lambda: time.sleep(0.05) or 1], lambda: 0)  # past the caller's spin
    assert caller_sleeps == [0, 1]


def test_errors_reach_the_caller_after_every_part_is_over():
    pool = _pool(2)
    finished = []

    def slow():
        time.sleep(0.02)
        finished.append("worker")
        return 1

    with pytest.raises(ZeroDivisionError):
        pool.run([slow], lambda: 1 // 0)
    assert finished == ["worker"]  # the caller's error waited for the worker's part
    with pytest.raises(KeyError):
        pool.run([lambda: {}["x"]], lambda: 0)
    assert pool.run([lambda: 2], lambda: 1) == [1, 2]  # the pool still works


def test_a_busy_pool_runs_another_callers_parts_itself():
    pool = _pool(2)
    inside = threading.Event()
    release = threading.Event()
    other = []

    def hold():
        inside.set()
        release.wait(10)
        return "held"

    holder = threading.Thread(target=lambda: other.append(pool.run([hold], lambda: "first")))
    holder.start()
    assert inside.wait(10)
    me = threading.get_ident()
    assert pool.run([threading.get_ident], threading.get_ident) == [me, me]  # serial here
    release.set()
    holder.join(10)
    assert other == [["first", "held"]]


def test_split_covers_the_range_once_and_nested_splits_run_serially():
    cpu_threads._workers(1)
    seen = np.zeros(1000, dtype=np.int64)

    def task(lo, hi):
        # A split inside a part: the pool is busy (and a worker is marked), so it runs here.
        cpu_threads.split(lambda a, b: np.add.at(seen, np.arange(lo + a, lo + b), 1), hi - lo, 2, align=1)

    cpu_threads.split(task, 1000, 2, align=1)
    assert (seen == 1).all()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_makes_its_own_pool():
    pool = _pool(2)
    assert pool.run([lambda: 1], lambda: 0) == [0, 1]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the inherited pool has no threads; a new one is made
        try:
            child_pool = _pool(2)
            ok = child_pool is not pool and child_pool.run([lambda: 1], lambda: 0) == [0, 1]
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    assert os.read(read, 2) == b"ok" and status == 0
    os.close(read)


@pytest.mark.parametrize("rounds", [1, 5])
def test_a_part_its_worker_has_not_started_is_run_by_the_caller(rounds):
    # A worker that gets no core (a busy machine) must not make the caller wait for the
    # whole part: the caller takes it back. Here the caller's part holds the GIL (pure
    # Python, with a switch interval far longer than it), so the worker cannot start.
    pool = _pool(2)
    caller = threading.get_ident()
    before = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        for _ in range(rounds):
            def busy():
                deadline = time.perf_counter() + 0.02
                while time.perf_counter() < deadline:
                    pass
                return "own"
            results = pool.run([lambda: ("part", threading.get_ident(), cpu_threads.parallel(1 << 30, 1))], busy)
            assert results == ["own", ("part", caller, False)]  # run here, serially as on a worker
            assert not getattr(cpu_threads._in_worker, "active", False)  # the caller is itself again
    finally:
        sys.setswitchinterval(before)
    # The worker, woken late, found nothing to run; the next splits use it again.
    meet = threading.Barrier(2, timeout=10)
    for _ in range(3):
        got = pool.run([lambda: (meet.wait(), threading.get_ident())[1]], lambda: (meet.wait(), "own")[1])
        assert got[0] == "own" and got[1] != caller
