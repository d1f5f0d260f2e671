"""Joining processes that were not started together into one MPI communicator.

Each process runs under its own ``mpiexec -n 1`` (MPICH refuses to connect two plain
singleton processes: its disjoint-groups check). By the time `join` runs, every rank has
met on the rendezvous store (`_startup.meet`), so nobody waits for a rank that will not
come. Rank 0 opens an MPI port and lets the others in one at a time, in rank order
(concurrent ``Connect`` calls to one port crash MPICH now and then): it publishes
``admit/<r>`` with the port name, rank r connects, and the group so far accepts it
(``Accept`` + ``Merge``). The result is reordered by rank.
"""

import os

import numpy as np

from . import _health
from ._mpi import mpi
from ._work import Work

__all__ = ["join", "check_process_manager"]


def check_process_manager(init_method, world_size):
    """Raise, saying how to start it, if this process has no MPI process manager."""
    if not any(name in os.environ for name in ("PMI_RANK", "PMI_FD", "PMIX_RANK", "HYDI_CONTROL_FD")):
        raise RuntimeError(
            f"init_process_group({init_method!r}) with world_size={world_size}: this process was not "
            f"started by mpiexec. Start all ranks together with `mpiexec -n {world_size} python ...` or "
            f"`python -m ember_distributed.run --nproc-per-node {world_size} ...`, or start each one "
            f"under `mpiexec -n 1 python ...` (MPI can only connect processes that have a process manager)")


def join(store, rank, world_size, timeout):
    """An intra-communicator of ``world_size`` processes, this one at ``rank``.

    Args:
        store: the process group's store, on which every rank has already met.
    """
    MPI = mpi()
    if rank == 0:
        port = MPI.Open_port()
        comm = MPI.COMM_SELF
        try:
            for joiner in range(1, world_size):
                store.set(f"admit/{joiner}", port)
                comm = _accept(comm, port, joiner)
        finally:
            MPI.Close_port(port)
    else:
        port = store.get(f"admit/{rank}").decode()
        with _health.blocking(f"rendezvous: rank {rank} connecting to rank 0"):
            comm = MPI.COMM_SELF.Connect(port, root=0).Merge(high=True)
        for joiner in range(rank + 1, world_size):
            comm = _accept(comm, None, joiner)
    with _health.blocking("rendezvous: ordering the ranks"):
        ordered = comm.Split(0, rank)
    ranks = np.empty(world_size, dtype=np.int64)
    Work([ordered.Iallgather(np.array([rank], dtype=np.int64), ranks)], "rendezvous", timeout).wait()
    if sorted(ranks.tolist()) != list(range(world_size)):
        raise RuntimeError(f"rendezvous: the processes claimed ranks {sorted(ranks.tolist())}; each rank in "
                           f"[0, {world_size}) must be taken by exactly one process")
    return ordered


def _accept(comm, port, joiner):
    """Let rank ``joiner`` in; every current member takes part in the Accept."""
    with _health.blocking(f"rendezvous: accepting rank {joiner}"):
        return comm.Accept(port, root=0).Merge(high=False)
