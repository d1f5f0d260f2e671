"""Joining processes that were not started together: env://, tcp://, file://.

The rendezvous exchanges one thing, the MPI port name of rank 0; the processes then
build one communicator with MPI's dynamic-process calls: rank 0's group accepts each
joiner in turn (``Accept`` + ``Merge``) and the result is reordered by rank.

What works with the mpich wheel: each process must itself run under ``mpiexec -n 1``
(MPICH refuses to connect two plain singleton processes: its disjoint-groups check). A
process started as plain ``python`` that asks for ``world_size > 1`` gets an error
saying so. Processes started together by one ``mpiexec -n N`` need no rendezvous.

Joiners connect one at a time: rank 0 hands its port name to one waiting joiner, and
the group accepts that one before the next is let in (concurrent ``Connect`` calls to one
port crash MPICH now and then). Rank 0 waits for each joiner with the group's timeout
(MPI's Accept itself cannot time out), so a rank that never arrives makes
``init_process_group`` raise instead of hanging.
"""

import os
import socket
import time
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

from ._mpi import mpi
from ._work import DistributedTimeoutError, Work

__all__ = ["join"]


def join(init_method, rank, world_size, timeout):
    """An intra-communicator of ``world_size`` processes, this one at ``rank``."""
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}: rank must be in [0, {world_size})")
    if not any(name in os.environ for name in ("PMI_RANK", "PMI_FD", "PMIX_RANK", "HYDI_CONTROL_FD")):
        raise RuntimeError(
            f"init_process_group({init_method!r}) with world_size={world_size}: this process was not "
            f"started by mpiexec. Start all ranks together with `mpiexec -n {world_size} python ...` or "
            f"`python -m ember_distributed.run --nproc-per-node {world_size} ...`, or start each one "
            f"under `mpiexec -n 1 python ...` (MPI can only connect processes that have a process manager)")
    store = _store(init_method, rank, world_size)
    MPI = mpi()
    if rank == 0:
        port = MPI.Open_port()
        try:
            store.open()
            comm = MPI.COMM_SELF
            while comm.Get_size() < world_size:
                comm = _admit_next(comm, port, store, timeout)
        finally:
            store.close()
            MPI.Close_port(port)
    else:
        port = store.request_port(timeout)
        comm = MPI.COMM_SELF.Connect(port, root=0).Merge(high=True)
        while comm.Get_size() < world_size:
            comm = _admit_next(comm, None, store, timeout)
    ordered = comm.Split(0, rank)
    ranks = np.empty(world_size, dtype=np.int64)
    Work([ordered.Iallgather(np.array([rank], dtype=np.int64), ranks)], "rendezvous", timeout).wait()
    if sorted(ranks.tolist()) != list(range(world_size)):
        raise RuntimeError(f"rendezvous: the processes claimed ranks {sorted(ranks.tolist())}; each rank in "
                           f"[0, {world_size}) must be taken by exactly one process")
    return ordered


def _admit_next(comm, port, store, timeout):
    """Let one more joiner in; every current member takes part in the Accept."""
    go = np.array([1], dtype=np.int64)
    failure = None
    if comm.Get_rank() == 0:
        try:
            store.admit_next(port, timeout)
        except DistributedTimeoutError as error:
            go[0], failure = 0, error
    # The members learn whether to Accept through a broadcast they can time out on.
    Work([comm.Ibcast(go, root=0)], "rendezvous", timeout).wait()
    if not go[0]:
        raise failure or DistributedTimeoutError("rendezvous timed out: not every rank joined")
    return comm.Accept(port, root=0).Merge(high=False)


def _store(init_method, rank, world_size):
    url = urlparse(init_method)
    if url.scheme == "env":
        address, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        for name, value in (("MASTER_ADDR", address), ("MASTER_PORT", port)):
            if value is None:
                raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                                 f"variable {name} expected, but not set")
        return _TCPStore(address, int(port), rank)
    if url.scheme == "tcp":
        if url.hostname is None or url.port is None:
            raise ValueError(f"tcp:// init_method needs a host and port, like 'tcp://10.1.1.20:23456', "
                             f"got {init_method!r}")
        return _TCPStore(url.hostname, url.port, rank)
    if url.scheme == "file":
        return _FileStore(Path(url.path), rank)
    raise ValueError(f"Unsupported init_method {init_method!r}: use env://, tcp://host:port or file:///path")


class _TCPStore:
    """Rank 0 listens on (host, port); a joiner connects and waits to be handed the port name."""

    def __init__(self, host, port, rank):
        self.address = (host, port)
        self.rank = rank
        self._server = None

    def open(self):
        self._server = socket.create_server(self.address)

    def admit_next(self, port_name, timeout):
        self._server.settimeout(timeout)
        try:
            connection, _ = self._server.accept()
        except socket.timeout:
            raise DistributedTimeoutError(f"rendezvous timed out after {timeout:g} s: a rank did not connect "
                                          f"to {self.address[0]}:{self.address[1]}") from None
        payload = port_name.encode()
        with connection:
            connection.sendall(len(payload).to_bytes(4, "big") + payload)

    def request_port(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection(self.address, timeout=max(0.1, deadline - time.monotonic())) as s:
                    s.settimeout(max(0.1, deadline - time.monotonic()))
                    size = int.from_bytes(_read(s, 4), "big")
                    return _read(s, size).decode()
            except OSError as error:
                if time.monotonic() > deadline:
                    raise DistributedTimeoutError(f"rendezvous: rank {self.rank} got no answer from rank 0 at "
                                                  f"{self.address[0]}:{self.address[1]} within {timeout:g} s "
                                                  f"({error})") from None
                time.sleep(0.05)

    def close(self):
        server, self._server = self._server, None
        if server is not None:
            server.close()


def _read(connection, size):
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise OSError("connection closed during rendezvous")
        data += chunk
    return data


class _FileStore:
    """Joiners knock with ``<path>.knock<rank>``; rank 0 answers one at a time with ``<path>.grant<rank>``."""

    def __init__(self, path, rank):
        self.path = path
        self.rank = rank
        self._admitted = set()

    def _file(self, kind, rank):
        return self.path.with_name(f"{self.path.name}.{kind}{rank}")

    def open(self):
        pass

    def admit_next(self, port_name, timeout):
        deadline = time.monotonic() + timeout
        while True:
            knocks = sorted(int(p.name.rpartition(".knock")[2]) for p in
                            self.path.parent.glob(self.path.name + ".knock*"))
            waiting = [r for r in knocks if r not in self._admitted]
            if waiting:
                break
            if time.monotonic() > deadline:
                raise DistributedTimeoutError(f"rendezvous timed out after {timeout:g} s waiting for ranks to "
                                              f"join through {self.path}")
            time.sleep(0.02)
        joiner = waiting[0]
        self._admitted.add(joiner)
        grant = self._file("grant", joiner)
        temporary = grant.with_name(grant.name + ".tmp")
        temporary.write_text(port_name)
        os.replace(temporary, grant)  # the joiner never reads a half-written name

    def request_port(self, timeout):
        self._file("knock", self.rank).touch()
        grant = self._file("grant", self.rank)
        deadline = time.monotonic() + timeout
        while not grant.exists():
            if time.monotonic() > deadline:
                raise DistributedTimeoutError(f"rendezvous: rank {self.rank} was not let in through "
                                              f"{self.path} within {timeout:g} s (is rank 0 running?)")
            time.sleep(0.02)
        port_name = grant.read_text()
        grant.unlink(missing_ok=True)
        self._file("knock", self.rank).unlink(missing_ok=True)
        return port_name

    def close(self):
        for leftover in self.path.parent.glob(self.path.name + ".*"):
            if leftover.name.rpartition(".")[2].startswith(("knock", "grant", "tmp")):
                leftover.unlink(missing_ok=True)
