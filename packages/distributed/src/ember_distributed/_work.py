"""Work: the handle of an operation in flight (``async_op=True``, ``isend``, ``irecv``).

Every ember collective is an MPI non-blocking call followed by a wait, even a "blocking"
one: waiting by polling ``Test`` lets ember give up after the process group's timeout and
raise an error naming the operation and the ranks, where a blocking MPI call would hang
forever on a peer that never arrives.
"""

import os
import time

from . import _health
from ._errors import DistBackendError
from ._mpi import mpi

__all__ = ["Work", "DistributedTimeoutError", "guarded"]


class DistributedTimeoutError(DistBackendError):
    """An operation did not complete within the process group's timeout."""


# Polling: spin on Test() for the first moments (a collective between local ranks takes
# microseconds, and sleeping would add a scheduler tick to each); then, for a few
# milliseconds, test between sched_yield()s; then back off to short sleeps so that a long
# wait leaves the core to the peers it is waiting for.
# Why the yielding phase: MPI's shared-memory transport moves a large message only inside
# MPI calls, in rounds between the two ranks (MPICH's single-copy protocol: handshake, copy,
# completion: 2-3 tests each side), so a rank sleeping between tests adds a sleep and a
# wake-up to every round: a 4 MB reduce-scatter took 0.5 ms polled without pause, 1.1 ms
# with 0.1 ms sleeps, 4 ms with 1 ms sleeps. An FSDP step waits for a dozen such
# collectives, mostly longer than the spin. sched_yield() instead hands the core to any
# other runnable process (a busy peer included) and returns at once when there is none;
# past a few milliseconds the peer is computing, not exchanging, and yielding would only
# compete with it for the core, so the wait sleeps.
_SPIN_SECONDS = 2e-4
_YIELD_SECONDS = 5e-3
# (os.sched_yield is POSIX; elsewhere a zero sleep yields the thread.)
_yield_core = getattr(os, "sched_yield", None) or (lambda: time.sleep(0))
_MAX_SLEEP_SECONDS = 1e-3
# A wait this long while some rank has exited fails (see _health.departed): the exited
# rank cannot take part. The delay lets operations that do not involve it finish first.
_DEPARTED_AFTER_SECONDS = 1.0


class Work:
    """The handle of one operation: ``wait()``, ``is_completed()``, ``is_success()``.

    Args:
        requests: the MPI requests that make up the operation.
        description: what it is, for error messages ("all_reduce on ranks [0, 1]").
        timeout: seconds to wait before raising DistributedTimeoutError.
        finish: called once after completion (writes staged results back); its return
            value is what ``result()`` gives.
        statuses: MPI Status objects, one per request, filled in on completion.
    """

    def __init__(self, requests, description, timeout, finish=None, statuses=None):
        self._requests = list(requests)
        self._statuses = statuses
        self._description = description
        self._timeout = timeout
        self._finish = finish
        self._result = None
        self._done = not self._requests
        self._exception = None
        if self._done:
            self._complete()

    def _complete(self):
        self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            self._result = finish()

    def is_completed(self):
        """True once the operation has finished (never blocks)."""
        if not self._done and self._mpi_test():
            self._complete()
        return self._done

    def is_success(self):
        """True if the operation finished without error."""
        return self.is_completed() and self._exception is None

    def exception(self):
        """The error the operation failed with, or None."""
        return self._exception

    def _mpi_test(self):
        try:
            return mpi().Request.Testall(self._requests, self._statuses)
        except Exception as error:  # an MPI error: a peer failed
            self._exception = RuntimeError(f"{self._description} failed: {error}")
            raise self._exception from error

    def wait(self, timeout=None):
        """Block until the operation finishes; True on success.

        Raises:
            DistributedTimeoutError: not finished after ``timeout`` (a timedelta or
                seconds; default: the process group's timeout).
        """
        if self._exception is not None:
            raise self._exception
        if self._done:
            return True
        limit = self._timeout if timeout is None else _seconds(timeout)
        start = time.monotonic()
        sleep = 0.0
        while not self._mpi_test():
            elapsed = time.monotonic() - start
            if _health.failure() is not None:
                try:
                    _health.check(self._description)
                except DistBackendError as error:
                    self._exception = error
                    raise
            if elapsed > _DEPARTED_AFTER_SECONDS and _health.departed():
                self._exception = DistBackendError(
                    f"{self._description} failed: rank(s) {sorted(_health.departed())} exited while this rank "
                    f"waits for them; the process group can no longer be used")
                raise self._exception
            if elapsed > limit:
                self._exception = DistributedTimeoutError(
                    f"{self._description} timed out after {limit:g} s: a peer did not take part "
                    f"(it may have died, be stuck, or be calling a different operation); the "
                    f"process group can no longer be used")
                raise self._exception
            if elapsed > _YIELD_SECONDS:
                sleep = min(_MAX_SLEEP_SECONDS, sleep * 2 or 1e-5)
                time.sleep(sleep)
            elif elapsed > _SPIN_SECONDS:
                _yield_core()
        self._complete()
        return True

    def result(self):
        """What the operation produced (the output tensors), after waiting for it."""
        self.wait()
        return self._result

    def __repr__(self):
        state = "completed" if self._done else "pending"
        return f"<Work {self._description}: {state}>"


def _seconds(timeout):
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


def guarded(comm, description, timeout, call):
    """Run the blocking MPI ``call()`` on ``comm`` once every member has arrived.

    The members first meet in a non-blocking barrier, polled against ``timeout`` and
    the health flag, so a missing or dead member raises instead of hanging the call.
    """
    Work([comm.Ibarrier()], description, timeout).wait()
    with _health.blocking(description):
        return call()
