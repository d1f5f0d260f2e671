"""The multi-process iterator of a DataLoader: workers fetch, the main process dispatches
indices, reassembles the order and enforces the robustness contract (see dataloader.py)."""
import itertools
import multiprocessing
import os
import queue
import signal
import time
import weakref

from . import _shared_memory
from ._fetch import create_fetcher
from ._iterators import BaseIterator
from ._worker import ExceptionWrapper, IterableDatasetStopIteration, worker_loop

__all__ = ["MultiProcessIterator"]

_POLL_INTERVAL = 0.2  # seconds between liveness checks while waiting for a batch
_JOIN_TIMEOUT = 5.0
_iterator_ids = itertools.count()


def _shutdown_workers(state):
    """Stop the workers, close the queues and unlink leftover segments (idempotent).

    A plain function over a dict so that ``weakref.finalize`` can run it after the
    iterator is gone, including at interpreter exit.
    """
    if state["done"]:
        return
    state["done"] = True
    workers, index_queues = state["workers"], state["index_queues"]
    for q in index_queues:
        try:
            q.put(None)
        except (OSError, ValueError):
            pass
    # After a timeout or a death the workers are not expected to stop on request.
    deadline = time.monotonic() + state.get("join_timeout", _JOIN_TIMEOUT)
    for w in workers:
        w.join(timeout=max(0.0, deadline - time.monotonic()))
    for w in workers:
        if w.is_alive():  # stuck in user code: it had its chance to exit cleanly
            w.terminate()
            w.join(timeout=1.0)
            if w.is_alive():
                w.kill()
                w.join()
    for q in index_queues + [state["result_queue"]]:
        q.cancel_join_thread()
        q.close()
    _shared_memory.unlink_leftovers(state["shm_prefix"])


def _death_message(worker_id, process):
    code = process.exitcode
    if code is not None and code < 0:
        try:
            name = signal.strsignal(-code) or signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"DataLoader worker {worker_id} (pid {process.pid}) is killed by signal: {name}. "
    return f"DataLoader worker {worker_id} (pid(s) {process.pid}) exited unexpectedly with exit code {code}"


class MultiProcessIterator(BaseIterator):
    """Workers fetch; the main process dispatches indices and reassembles the order."""

    def __init__(self, loader):
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        context = loader.multiprocessing_context or multiprocessing
        self._shm_prefix = f"ember_dl_{os.getpid()}_{next(_iterator_ids)}_{os.urandom(3).hex()}_"
        self._result_queue = context.Queue()
        self._index_queues, self._workers = [], []
        base_seed = loader._base_seed()
        for worker_id in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            w = context.Process(
                target=worker_loop, daemon=True,
                args=(self._dataset_kind, self._dataset, index_queue, self._result_queue, create_fetcher,
                      self._auto_collation, self._collate_fn, self._drop_last, base_seed, loader.worker_init_fn,
                      worker_id, self._num_workers, self._shm_prefix, os.getpid()))
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._state = {"done": False, "workers": self._workers, "index_queues": self._index_queues,
                       "result_queue": self._result_queue, "shm_prefix": self._shm_prefix}
        self._finalizer = weakref.finalize(self, _shutdown_workers, self._state)
        self._epoch = 0
        self._reset(first=True)

    @property
    def _shutdown(self):
        return self._state["done"]

    def _reset(self, first=False):
        if not first:
            self._sampler_iter = iter(self._index_sampler)
            self._num_yielded = 0
            self._epoch += 1
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker that still has data
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return
        self._index_queues[worker_id].put((self._epoch, self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_result(self):
        """The next (epoch, index, payload) from any worker; errors instead of hanging."""
        start = time.monotonic()
        while True:
            wait = _POLL_INTERVAL
            if self._timeout > 0:
                remaining = self._timeout - (time.monotonic() - start)
                if remaining <= 0:
                    self._state["join_timeout"] = 0.5
                    self._finalizer()
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
                wait = min(wait, remaining)
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            for worker_id, w in enumerate(self._workers):
                if self._workers_status[worker_id] and not w.is_alive():
                    message = _death_message(worker_id, w)
                    self._state["join_timeout"] = 0.5
                    self._finalizer()
                    raise RuntimeError(message)

    def __next__(self):
        if self._shutdown:
            raise StopIteration
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)  # its worker has no more data
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._finalizer()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                payload = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process(payload)
            epoch, idx, payload = self._get_result()
            if epoch != self._epoch:  # left over from an epoch that was broken off
                self._discard(payload)
                continue
            self._tasks_outstanding -= 1
            if isinstance(payload, IterableDatasetStopIteration):
                self._workers_status[payload.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx and self._in_order:
                self._task_info[idx] += (payload,)
                continue
            self._task_info.pop(idx, None)
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
            return self._process(payload)

    def _process(self, payload):
        self._try_put_index()
        if isinstance(payload, ExceptionWrapper):
            self._finalizer()
            payload.reraise()
        name, size, description = payload
        self._num_yielded += 1
        if name is None:
            return self._pinned(description)
        return self._pinned(_shared_memory.unpack_batch(name, size, description))

    @staticmethod
    def _discard(payload):
        if isinstance(payload, tuple) and payload[0] is not None and payload[1]:
            try:
                os.unlink(os.path.join(_shared_memory.SHM_DIR, payload[0]))
            except FileNotFoundError:
                pass

    def _shutdown_workers(self):
        """Stop the workers now (also happens when the iterator is garbage collected)."""
        self._finalizer()
