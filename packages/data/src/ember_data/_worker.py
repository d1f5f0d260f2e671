"""What runs inside a DataLoader worker process, and what it tells the main process."""
import os
import queue
import random
import signal
import sys
import traceback

import ember_tensor

from . import _shared_memory

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper", "worker_loop"]

_worker_info = None
_PARENT_CHECK_INTERVAL = 1.0  # seconds between checks that the main process is still there


class WorkerInfo:
    """Facts about the current worker: ``id``, ``num_workers``, ``seed``, ``dataset`` (its copy)."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")
        super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


def get_worker_info():
    """The ``WorkerInfo`` of the current DataLoader worker, or None in the main process.

    >>> get_worker_info() is None
    True
    """
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process with its traceback text."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise an exception of the original type whose message holds the worker's traceback."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type whose constructor wants other arguments
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    """KeyError puts quotes around its message: this keeps the traceback readable."""

    def __repr__(self):
        return self


class IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset iterator is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


def _use_serial_kernels():
    """One thread for ember's kernels and the BLAS in this worker, as PyTorch's workers set.

    Parallel kernels in several workers would only fight over the same cores, and a forked
    worker inherits the parent's OpenMP runtime in a state it cannot use (GNU OpenMP
    terminates the process at the first parallel region): with a budget of one thread every
    kernel takes its serial path and Numba's pool is never entered.
    """
    ember_tensor.set_num_threads(1)


def _seed_everything(seed):
    ember_tensor.manual_seed(seed)
    random.seed(seed)
    if "numpy" in sys.modules:
        import numpy as np
        np.random.seed(seed % 2 ** 32)


def worker_loop(dataset_kind, dataset, index_queue, result_queue, fetcher_factory, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers, shm_prefix, parent_pid):
    """Fetch the batches the main process asks for until told to stop (a ``None`` task).

    Tasks are ``(epoch, index, batch_indices)``; results ``(epoch, index, payload)`` where
    payload is ``(segment_name, size, description)``, an ``ExceptionWrapper`` or an
    ``IterableDatasetStopIteration``.
    """
    global _worker_info
    # Ctrl-C goes to the whole process group: the main process handles it and shuts
    # the workers down; a worker printing its own KeyboardInterrupt would only add noise.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _use_serial_kernels()
    seed = base_seed + worker_id
    _seed_everything(seed)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    init_exception = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = fetcher_factory(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_exception = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
    counter = 0
    current_epoch = None
    exhausted = False
    while True:
        try:
            task = index_queue.get(timeout=_PARENT_CHECK_INTERVAL)
        except queue.Empty:
            if os.getppid() != parent_pid:  # the main process died: nobody will read our results
                break
            continue
        if task is None:
            break
        epoch, index, batch_indices = task
        if epoch != current_epoch:  # a new epoch of a persistent worker: restart the stream
            if current_epoch is not None and init_exception is None:
                fetcher = fetcher_factory(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
            current_epoch, exhausted = epoch, False
        if init_exception is not None:
            payload, init_exception = init_exception, None
        elif exhausted:
            payload = IterableDatasetStopIteration(worker_id)
        else:
            try:
                batch = fetcher.fetch(batch_indices)
                if _shared_memory.available():
                    name = f"{shm_prefix}{worker_id}_{counter}"
                    counter += 1
                    size, description = _shared_memory.pack_batch(batch, name)
                    payload = (name, size, description)
                else:
                    payload = (None, 0, batch)
            except StopIteration:
                exhausted = True
                payload = IterableDatasetStopIteration(worker_id)
            except Exception:
                payload = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
        result_queue.put((epoch, index, payload))
        del task
    result_queue.cancel_join_thread()
