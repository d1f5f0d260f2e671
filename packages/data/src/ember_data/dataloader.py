"""DataLoader: batches from a dataset, in the main process or in worker processes.

With ``num_workers > 0`` each worker is a process with its own copy of the dataset;
the main process hands out batch indices (``prefetch_factor`` per worker ahead) and
collects results in order. Robustness is part of the contract: a worker's exception is
re-raised with the worker's traceback, a dead worker or a ``timeout`` turns into an
error instead of a hang, and workers and shared memory are released when the iterator
is exhausted, broken out of, garbage collected or the interpreter exits.
"""
import itertools
import multiprocessing
import os
import queue
import signal
import time
import warnings
import weakref

import ember_tensor

from . import _shared_memory
from ._collate import default_collate, default_convert
from ._fetch import create_fetcher
from ._worker import ExceptionWrapper, IterableDatasetStopIteration, worker_loop
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader"]

_POLL_INTERVAL = 0.2  # seconds between liveness checks while waiting for a batch
_JOIN_TIMEOUT = 5.0
_iterator_ids = itertools.count()


class _InfiniteConstantSampler(Sampler):
    """The "sampler" of an IterableDataset: the dataset decides what comes next."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterate over ``dataset`` in batches (``torch.utils.data.DataLoader``).

    Args mirror PyTorch: batch_size, shuffle, sampler, batch_sampler, num_workers,
    collate_fn, pin_memory, drop_last, timeout, worker_init_fn, multiprocessing_context,
    generator, prefetch_factor, persistent_workers, pin_memory_device, in_order.

    >>> import ember_tensor as torch
    >>> from ember_data import TensorDataset
    >>> loader = DataLoader(TensorDataset(torch.arange(5)), batch_size=2)
    >>> [batch[0].tolist() for batch in loader]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        if pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.")

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = "iterable"
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = "map"
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._dataset_kind == "iterable":
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self._iterator = None

    @property
    def multiprocessing_context(self):
        """The multiprocessing context workers are started with (None: the platform default)."""
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError("multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                valid = multiprocessing.get_all_start_methods()
                if context not in valid:
                    raise ValueError("multiprocessing_context option should specify a valid start method in "
                                     f"{valid!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not hasattr(context, "Process"):
                raise TypeError("multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context={context}")
        self._multiprocessing_context = context

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIterator(self)
        if self.persistent_workers:
            if self._iterator is None or self._iterator._shutdown:
                self._iterator = _MultiProcessIterator(self)
            else:
                self._iterator._reset()
            return self._iterator
        return _MultiProcessIterator(self)

    def __len__(self):
        if self._dataset_kind == "iterable":
            length = len(self.dataset)
            if self.batch_size is not None:
                length = (length // self.batch_size if self.drop_last
                          else (length + self.batch_size - 1) // self.batch_size)
            return length
        return len(self._index_sampler)

    def _base_seed(self):
        seed = ember_tensor.empty((), dtype=ember_tensor.int64)
        return int(seed.random_(generator=self.generator).item())


class _BaseIterator:
    def __init__(self, loader):
        self._loader = loader
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._index_sampler = loader._index_sampler
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def _next_index(self):
        return next(self._sampler_iter)


class _SingleProcessIterator(_BaseIterator):
    """Everything in the main process: sampler -> fetch -> collate."""

    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = create_fetcher(self._dataset_kind, self._dataset, self._auto_collation,
                                       self._collate_fn, self._drop_last)

    def __next__(self):
        data = self._fetcher.fetch(self._next_index())
        self._num_yielded += 1
        return data


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


class _MultiProcessIterator(_BaseIterator):
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
            return description
        return _shared_memory.unpack_batch(name, size, description)

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
