"""Start-up before MPI: who this process is, the rendezvous store, and the meeting.

``MPI_Init`` waits (spinning a core) for every rank the process manager started, and
cannot time out: a rank that never calls ``init_process_group`` would hang the others
forever. So ember meets first, over a store, and starts MPI only once every rank has
arrived. The meeting waits on the store with the ``timeout`` given to
``init_process_group``, sleeping in a socket read (no spinning), and names the ranks
that did not come.

The store comes from ``init_method`` (``env://``: MASTER_ADDR/MASTER_PORT, as set by
ember's launcher and torchrun; ``tcp://host:port``; ``file:///path``) or is the
``store=`` argument. Rank 0 serves a TCPStore; it also carries the health watch
(`_health`). Under a bare ``mpiexec -n N`` with no MASTER_ADDR/MASTER_PORT there is no
store to meet on: MPI starts at once (MPI_Init then waits for every rank, with no
timeout), and rank 0 serves a store on a free port afterwards for the health watch.
"""

import datetime
import os
import socket
from urllib.parse import urlparse

from ._errors import DistBackendError, DistNetworkError, DistStoreError
from ._store import FileStore, PrefixStore, TCPStore

__all__ = ["launched_world", "rendezvous_store", "meet", "health_address", "serve_health_store"]

# (rank, size) variables of process managers: MPICH's hydra and Slurm's PMI, Open MPI.
_LAUNCHER_VARIABLES = (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"))


def launched_world():
    """(rank, size) that the process manager (mpiexec, srun) gave this process, or None."""
    for rank_name, size_name in _LAUNCHER_VARIABLES:
        if rank_name in os.environ and size_name in os.environ:
            return int(os.environ[rank_name]), int(os.environ[size_name])
    return None


def rendezvous_store(init_method, rank, world_size, seconds, required):
    """The store ``init_method`` names (rank 0 serves a TCP one); None when ``env://``
    lacks MASTER_ADDR/MASTER_PORT and ``required`` is False."""
    url = urlparse(init_method)
    timeout = datetime.timedelta(seconds=seconds)
    if url.scheme == "env":
        address, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        if not required and (address is None or port is None):
            return None
        for name, value in (("MASTER_ADDR", address), ("MASTER_PORT", port)):
            if value is None:
                raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {name} expected, but not set")
        return _tcp_store(address, int(port), rank, timeout)
    if url.scheme == "tcp":
        if url.hostname is None or url.port is None:
            raise ValueError(f"tcp:// init_method needs a host and port, like 'tcp://10.1.1.20:23456', "
                             f"got {init_method!r}")
        return _tcp_store(url.hostname, url.port, rank, timeout)
    if url.scheme == "file":
        store = FileStore(url.path, world_size)
        store.set_timeout(timeout)
        return store
    raise ValueError(f"Unsupported init_method {init_method!r}: use env://, tcp://host:port or file:///path")


def _tcp_store(host, port, rank, timeout):
    try:
        return TCPStore(host, port, None, rank == 0, timeout=timeout, wait_for_workers=False)
    except DistNetworkError as error:
        raise DistBackendError(f"init_process_group: rank {rank} could not reach rank 0's store at {host}:{port} "
                               f"within {timeout.total_seconds():g} s: rank 0 did not join ({error})") from None
    except OSError as error:  # rank 0 could not listen: the port is taken
        raise DistNetworkError(f"init_process_group: rank 0 could not serve the store on port {port}: {error} "
                               f"(is another job using MASTER_PORT {port}?)") from None


def meet(store, rank, world_size, seconds, generation):
    """Wait until all ``world_size`` ranks have arrived at ``store``; the store for this
    process group (keys under a prefix of its own).

    Raises:
        DistBackendError: not all arrived within ``seconds``; names the missing ranks.
    """
    group_store = PrefixStore(f"__ember/pg{generation}", store)
    group_store.set(f"arrived/{rank}", str(os.getpid()))
    if group_store.add("arrived", 1) >= world_size:
        group_store.set("all_arrived", "1")
    try:
        group_store.wait(["all_arrived"], datetime.timedelta(seconds=seconds))
    except DistStoreError:
        missing = [r for r in range(world_size) if not group_store.check([f"arrived/{r}"])]
        raise DistBackendError(
            f"init_process_group timed out after {seconds:g} s on rank {rank}: rank(s) {missing} of "
            f"{world_size} never joined (they did not call init_process_group, or are stuck or dead "
            f"before it)") from None
    return group_store


def health_address():
    """The address other ranks can reach this host at, for a store served here."""
    if os.environ.get("MASTER_ADDR"):
        return os.environ["MASTER_ADDR"]
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def serve_health_store(seconds):
    """A TCPStore served here on a free port (rank 0's, when the rendezvous store is not TCP)."""
    return TCPStore(health_address(), 0, None, True, timeout=datetime.timedelta(seconds=seconds),
                    wait_for_workers=False)
