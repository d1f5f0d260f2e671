"""ember's CPU worker pool: the threads that run the other parts of a split kernel while the
calling thread runs the first (`threads.split`, `threads.run_parts`).

Why not `concurrent.futures`: handing a part to a sleeping thread and waiting for it
costs two wake-ups, and on a virtual machine each is 30-60 us (a ThreadPoolExecutor
submit-and-wait measured 84 us, a two-part split of a trivial kernel 107 us, on this
project's 2-vCPU machines) — as long as half of a 256K-element softmax, so a second thread
did not pay below ~400K elements. OpenMP (PyTorch's parallel loops, Numba's prange) keeps
its threads spinning between parallel regions; so do these workers: after a part, a
worker spins without the GIL on its task counter (`kernels/spin.wait_for_change`) for
~`IDLE_SPIN_US` before it sleeps on a condition variable, and the caller spins the same
way for the workers' done counters. A split of a trivial kernel then costs ~12 us (107 us
before, quiet machine); a 64K-element sum split in two 44 us (151 before, serial 63).

The GIL: a worker must take it to start its part (a Python call into a GIL-free kernel).
Asked for while the caller still holds it (dispatching its own part), it would sleep and
cost a wake-up again; so a worker that sees its counter move waits ~`GRACE_US` more
before taking it (the caller's slicing and Numba's dispatch before its kernel releases
the GIL; measured, softmax of 128 rows of 1000 at 2 threads: grace 3 µs 127-139 µs, 8 µs
103-108, 15 µs 107-110, 25 µs 112-114; one thread 123). A part is a Python callable; it runs with `threads` marking the thread a
worker, so kernels it launches run serially (a part never waits on the pool it runs in).

A part not yet started when the caller has finished its own is taken back and run by the
caller (each part waits in a one-element list: `list.pop` is atomic under the GIL, so
exactly one of the two threads gets it), marked a worker while it runs the part, so that
the part's kernels run serially wherever it runs. On a quiet machine a worker starts its part
25-60 us after the hand-over and nothing is taken back; on a machine whose other core is
busy, the worker may get no core until the caller's part is over, and the caller then
waited for it to run its part from the start: a split product took the time of its two
parts one after the other, plus the wait (measured 2026-11-28, load 2-3 on 2 cores: a
Transformer step 22 ms at 1 thread, 55-60 ms at 2). Taking the part back bounds a split
near one thread's time whatever the load; the bits are the same (a part computes the
same range on either thread).

One split runs at a time: a second caller (another user thread) that finds the pool busy
runs its parts itself, one after another. A forked child makes a new pool (it inherits
the object, not the threads).
"""
import os
import threading
import time

import numpy as np

__all__ = ["Pool", "shared"]

IDLE_SPIN_US = 200   # how long a worker spins for the next part before sleeping
WAIT_SPIN_US = 200   # how long the caller spins for a worker's part before sleeping
GRACE_US = 8          # how long a worker waits after its counter moves before taking the GIL
_STRIDE = 8          # int64 counters a cache line apart: no two threads write one line

_shared = None
_shared_lock = threading.Lock()


def shared(workers, mark_worker):
    """The process's pool, with at least `workers` worker threads (made or grown here)."""
    global _shared
    with _shared_lock:
        pool = _shared
        if pool is None or pool.pid != os.getpid() or pool.size < workers:
            if pool is not None and pool.pid == os.getpid():
                pool.close()
            _shared = pool = Pool(workers, mark_worker)
        return pool


class Pool:
    """`workers` threads that run parts handed to them by `run`."""

    def __init__(self, workers, mark_worker):
        from .kernels.spin import wait_for_change

        self._wait = wait_for_change
        self._mark_worker = mark_worker
        self.size = workers
        self.pid = os.getpid()
        self._busy = threading.Lock()
        self._cond = threading.Condition()
        self._closing = False
        # Per worker: its task counter, bumped by the caller (slot 2i), and its done
        # counter, set to the task counter by the worker when the part is over (2i + 1).
        self._counters = np.zeros(_STRIDE * 2 * (workers + 1), dtype=np.int64)
        # Per worker: a list holding its pending part, popped by whichever thread runs it.
        self._tasks = [[] for _ in range(workers)]
        self._results = [None] * workers
        self._sleeping = [False] * workers
        self._caller_sleeping = False
        reads_per_us = _calibrate(self._wait, self._counters, _STRIDE * 2 * workers)
        self._idle_reads = max(1, int(IDLE_SPIN_US * reads_per_us))
        self._wait_reads = max(1, int(WAIT_SPIN_US * reads_per_us))
        self._grace = int(GRACE_US * reads_per_us)
        self._threads = [threading.Thread(target=self._serve, args=(i, mark_worker), daemon=True,
                                          name=f"ember-cpu-{i}") for i in range(workers)]
        for thread in self._threads:
            thread.start()

    def run(self, parts, own):
        """Run `parts` (callables, at most `size`) on the workers and `own` on this thread at
        once; returns [own(), parts[0](), ...], raising the first part's error after all
        are over. A busy pool (another thread's split) runs everything here in turn."""
        if not self._busy.acquire(blocking=False):
            return [own()] + [part() for part in parts]
        try:
            return self._run(parts, own)
        finally:
            self._busy.release()

    def _run(self, parts, own):
        counters = self._counters
        wanted = []
        for slot, part in enumerate(parts):
            self._tasks[slot].append(part)
            wanted.append(int(counters[2 * _STRIDE * slot]) + 1)
            counters[2 * _STRIDE * slot] = wanted[-1]
        if any(self._sleeping):
            with self._cond:
                self._cond.notify_all()
        first = error = None
        try:
            first = own()
        except BaseException as caught:  # the workers still use the buffers: wait for them
            error = caught
        results = [first]
        for slot, want in enumerate(wanted):
            part = _take(self._tasks[slot])
            if part is not None:  # its worker has not started it: run it here, as a worker would
                self._mark_worker(True)
                try:
                    outcome = _call(part)
                finally:
                    self._mark_worker(False)
                part = None
            else:
                self._wait_done(slot, want)
                outcome, self._results[slot] = self._results[slot], None
            value, part_error = outcome
            if error is None and part_error is not None:
                error = part_error
            results.append(value)
        if error is not None:
            raise error
        return results

    def _wait_done(self, slot, want):
        index = 2 * _STRIDE * slot + _STRIDE
        seen = int(self._counters[index])
        # After a split whose part was taken back, the worker may still be to write that
        # split's number (lower than `want`) before this one's: then spin once more.
        for _ in range(2):
            if seen == want:
                return
            seen = self._wait(self._counters, index, seen, self._wait_reads, 0)
        if seen == want:
            return
        with self._cond:
            self._caller_sleeping = True
            while self._counters[index] != want:
                self._cond.wait()
            self._caller_sleeping = False

    def _serve(self, slot, mark_worker):
        mark_worker()
        counters, task_index = self._counters, 2 * _STRIDE * slot
        done_index = task_index + _STRIDE
        seen = 0
        while True:
            value = self._wait(counters, task_index, seen, self._idle_reads, self._grace)
            if value == seen:
                # The GIL orders this against `_run`: either the caller sees `_sleeping`
                # and notifies, or this thread sees the counter moved and does not wait.
                with self._cond:
                    self._sleeping[slot] = True
                    while counters[task_index] == seen and not self._closing:
                        self._cond.wait()
                    self._sleeping[slot] = False
                    if counters[task_index] == seen:  # closed (a grown pool replaced it), no part pending
                        return
                value = int(counters[task_index])
            seen = value
            part = _take(self._tasks[slot])
            if part is not None:  # else the caller took it back and ran it
                self._results[slot] = _call(part)
            # Not kept while this thread waits for the next part: the part's arguments (a
            # result's memory, an operand) would stay alive after the caller dropped them.
            part = None
            counters[done_index] = value
            if self._caller_sleeping:
                with self._cond:
                    self._cond.notify_all()

    def close(self):
        """Let the workers end once idle (a grown pool replaces this one)."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()


def _take(pending):
    """The part waiting in `pending` (a list of at most one), removed, or None: one atomic
    `pop`, so a worker and the caller never both get it."""
    try:
        return pending.pop()
    except IndexError:
        return None


def _call(part):
    """(part(), None), or (None, the error it raised)."""
    try:
        return part(), None
    except BaseException as error:
        return None, error


def _calibrate(wait, counters, index):
    """Reads of `wait_for_change` per microsecond on this CPU (a pause hint's length differs
    tenfold between CPU generations), from a timed spin on a counter nobody bumps."""
    reads = 20000
    wait(counters, index, 0, 1, 0)  # compiled or loaded before timing
    start = time.perf_counter()
    wait(counters, index, 0, reads, 0)
    elapsed_us = (time.perf_counter() - start) * 1e6
    return reads / max(elapsed_us, 1.0)
