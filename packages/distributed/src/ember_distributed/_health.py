"""Watching the peers: a dead rank is noticed in milliseconds, and every survivor raises.

Each rank holds two connections to the job's TCPStore (served by rank 0):

- a *dead man's switch* (``TCPStore.watch``): if the rank's process dies, the kernel
  closes the socket and the server records ``failed = <rank>`` at once;
- a *watcher* thread blocked in ``store.wait([failed])``, which wakes when any rank is
  recorded as failed, or when rank 0's server itself is lost.

A rank that exits without an uncaught exception says goodbye instead (even on
``sys.exit(7)``, which atexit cannot tell from success); the watcher notes it, and an
operation still waiting after a moment, while a rank has left, raises too: the
departed rank will never take part.

The watcher only sets a flag; the main thread raises ``DistBackendError`` from the next
wait of any collective (`_work.Work.wait` polls it), so an error surfaces as PyTorch's
would: at the next collective, naming the rank that failed. A wait costs no CPU.

Blocking MPI calls (``Split``, ``Dup``, ``Accept``) cannot be polled: `_work.guarded` first
waits on a non-blocking barrier (so every member is known to have arrived) and marks
the call; if a failure is recorded while the main thread is stuck in one for longer
than ``_STUCK_GRACE_SECONDS``, the watcher prints the error and ends the process, since
nothing else would (MPI_Abort would kill the survivors too).

Under ``mpiexec -disable-auto-cleanup`` (ember's launcher), the process manager tells
survivors of a death with SIGUSR1, whose default action would kill them before they can
raise: `start` ignores it (SIG_IGN, which Python keeps through its own shutdown, unlike a
Python handler); the store has already told them.
"""

import atexit
import contextlib
import datetime
import os
import signal
import sys
import threading
import time

from ._errors import DistBackendError, DistNetworkError, DistStoreError
from ._store import TCPStore

__all__ = ["start", "stop", "failure", "departed", "record_failure", "check", "blocking", "set_exit_comm",
           "ready_to_finalize"]

_FAILED_KEY = "__ember/health/failed"
_LEFT_RANKS_KEY = "__ember/health/left_ranks"
_POLL_LEFT_SECONDS = 0.25
_STUCK_GRACE_SECONDS = 3.0


class _State:
    store = None  # the store the watch runs on; None when not watching
    watch = None
    rank = None
    world_size = None
    timeout = None
    failure = None  # the first failure seen: a message
    raised = False  # this process is ending with an uncaught exception
    departed = frozenset()  # ranks that have exited cleanly (said goodbye)
    exit_comm = None  # where the ranks meet at exit before MPI_Finalize
    blocking = None  # (description, since) while the main thread is in a blocking MPI call


_state = _State()


def failure():
    """The message of the first failure this process has seen, or None."""
    return _state.failure


def departed():
    """The ranks that have exited (cleanly) while this one still runs."""
    return _state.departed


def record_failure(message):
    """Remember a failure: the process group is broken, collectives raise from now on."""
    if _state.failure is None:
        _state.failure = message
        if _state.blocking is not None:
            threading.Thread(target=_end_if_stuck, daemon=True).start()


def check(description):
    """Raise DistBackendError if a peer failed."""
    message = failure()
    if message is not None:
        raise DistBackendError(f"{description} failed: {message}; the process group can no longer be used")


def start(store, rank, world_size, timeout):
    """Begin watching the job's ranks through ``store`` (a TCPStore)."""
    _state.store, _state.rank, _state.world_size, _state.timeout = store, rank, world_size, timeout
    _state.watch = store.watch(_FAILED_KEY, str(rank))
    threading.Thread(target=_watcher, args=(store.host, store.port), name="ember-health-watcher",
                     daemon=True).start()
    if hasattr(signal, "SIGUSR1") and signal.getsignal(signal.SIGUSR1) == signal.SIG_DFL \
            and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    if not getattr(sys.excepthook, "_ember_health", False):
        sys.excepthook = _excepthook_around(sys.excepthook)
    atexit.register(stop)


def _excepthook_around(hook):
    """An excepthook that first marks this process as failing: at exit it then leaves
    without goodbye (its peers learn at once that it is gone) and skips MPI_Finalize
    (which would wait for peers that may never come)."""
    def excepthook(kind, value, traceback):
        _state.raised = True
        hook(kind, value, traceback)

    excepthook._ember_health = True
    return excepthook


def _watcher(host, port):
    try:  # a connection of its own: the main thread's may be busy
        client = TCPStore(host, port, is_master=False, timeout=datetime.timedelta(seconds=30))
        while True:
            try:
                client.wait([_FAILED_KEY], datetime.timedelta(seconds=_POLL_LEFT_SECONDS))
                break
            except DistStoreError:
                # Ranks that exit cleanly (even with sys.exit(7)) say goodbye: note them, so
                # that whoever still waits for one of them can be told (see departed()).
                if client.check([_LEFT_RANKS_KEY]):
                    left = client.get(_LEFT_RANKS_KEY).decode().strip(",").split(",")
                    _state.departed = frozenset(int(r) for r in left) - {_state.rank}
        rank = client.get(_FAILED_KEY).decode()
        record_failure(f"rank {rank} exited or died (its connection to the job's store closed)")
    except (DistNetworkError, OSError):
        # Also while this rank is leaving: its exit barrier must not wait for a dead rank 0.
        record_failure(f"the job's store at {host}:{port} was lost: rank 0, which hosts it, exited or died")


def _end_if_stuck():
    since = time.monotonic()
    while time.monotonic() - since < _STUCK_GRACE_SECONDS:
        if _state.blocking is None:
            return
        time.sleep(0.05)
    description = _state.blocking[0] if _state.blocking else "a blocking MPI call"
    sys.stderr.write(f"ember_distributed: rank {_state.rank}: {description} cannot complete: {_state.failure}. "
                     f"Exiting, since a blocking MPI call cannot be interrupted.\n")
    sys.stderr.flush()
    os._exit(1)


@contextlib.contextmanager
def blocking(description):
    """Mark the main thread as inside a blocking MPI call (see the module's docstring)."""
    _state.blocking = (description, time.monotonic())
    try:
        if _state.failure is not None:
            threading.Thread(target=_end_if_stuck, daemon=True).start()
        yield
    finally:
        _state.blocking = None


def set_exit_comm(comm):
    """The communicator whose members meet at exit before MPI_Finalize (a copy of the world's)."""
    _state.exit_comm = comm


def ready_to_finalize():
    """True when it is safe to call MPI_Finalize, which waits for every rank and cannot
    time out: no failure was seen, this process is not ending on an exception, and every
    rank has reached its exit (a non-blocking barrier, polled against the timeout and the
    watch)."""
    if _state.failure is not None or _state.raised:
        return False
    comm, _state.exit_comm = _state.exit_comm, None
    if comm is None:
        return True
    try:
        request = comm.Ibarrier()
        deadline = time.monotonic() + _state.timeout
        sleep = 1e-4
        while not request.Test():
            if _state.failure is not None or time.monotonic() > deadline:
                return False
            time.sleep(sleep)
            sleep = min(sleep * 2, 0.01)
    except Exception:  # an MPI error: a peer is gone
        return False
    return True


def stop():
    """Leave cleanly: release the switch (the others learn this rank departed, not died)."""
    store, watch = _state.store, _state.watch
    if store is None:
        return
    _state.store = _state.watch = None
    if _state.raised:
        return  # the switch closes with the process: the others are told this rank failed
    with contextlib.suppress(OSError, DistNetworkError, DistStoreError):
        watch.release()
        store.append(_LEFT_RANKS_KEY, f"{_state.rank},")
