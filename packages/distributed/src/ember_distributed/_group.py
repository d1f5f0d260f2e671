"""Process groups: the default (world) group, ``new_group``, ranks and sizes.

A ProcessGroup wraps one MPI intra-communicator. The world group's communicator is
``MPI.COMM_WORLD`` (duplicated, so ember's traffic never mixes with the user's own mpi4py
calls) when the processes were started together by ``mpiexec -n N`` or ember's launcher;
processes started separately meet through a rendezvous (`_rendezvous`).
"""

import datetime
import importlib.util
import os

import numpy as np

from . import _health
from ._mpi import mpi
from ._rendezvous import check_process_manager, join
from ._startup import launched_world, meet, rendezvous_store, serve_health_store
from ._store import FileStore, TCPStore
from ._work import Work, guarded

__all__ = [
    "Backend", "ProcessGroup", "GroupMember", "group", "default_pg_timeout", "init_process_group",
    "destroy_process_group", "is_initialized", "is_available", "is_mpi_available", "is_gloo_available",
    "is_nccl_available", "new_group", "get_rank", "get_world_size", "get_backend", "get_process_group_ranks",
    "get_global_rank", "get_group_rank", "new_subgroups", "new_subgroups_by_enumeration",
]

default_pg_timeout = datetime.timedelta(minutes=30)


class Backend(str):
    """Backend names. Every backend name runs on MPI: ``'gloo'`` and ``'nccl'`` are accepted
    so that PyTorch code runs unchanged, and ``get_backend()`` answers the name the program
    asked for (a program that asked for "gloo" checks for "gloo")."""

    MPI = "mpi"
    GLOO = "gloo"
    NCCL = "nccl"
    UNDEFINED = "undefined"

    def __new__(cls, name):
        value = str(name).lower()
        if value not in (cls.MPI, cls.GLOO, cls.NCCL, "cpu:gloo,cuda:nccl"):
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, value)


class ProcessGroup:
    """A set of ranks that communicate: the world, or a group made by ``new_group``.

    Attributes:
        comm: the MPI intra-communicator of the group's members.
        ranks: the members' global ranks, in group-rank order.
        timeout: seconds an operation may wait for the others before raising.
    """

    def __init__(self, comm, ranks, timeout, backend=Backend.UNDEFINED):
        self.comm = comm
        self.ranks = list(ranks)
        self.timeout = timeout
        self.backend = backend  # the name asked for; every group runs on MPI

    def rank(self):
        """This process's rank within the group."""
        return self.comm.Get_rank()

    def size(self):
        """The number of processes in the group."""
        return len(self.ranks)

    def group_rank(self, global_rank):
        """The group rank of a global rank, with PyTorch's error for a non-member."""
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"Group {self!r} does not contain rank {global_rank}") from None

    def name(self):
        return "mpi"

    def __repr__(self):
        return f"<ProcessGroup mpi ranks={self.ranks}>"


class GroupMember:
    """PyTorch's marker for "not a member": what ``new_group`` returns on other ranks."""

    NON_GROUP_MEMBER = object()


class _GroupNamespace:
    """``dist.group.WORLD``: the default process group once it exists."""

    @property
    def WORLD(self):  # noqa: N802 -- PyTorch's name
        return _world


group = _GroupNamespace()
_world = None
_generation = 0  # init_process_group calls so far: each meets under keys of its own


def _seconds(timeout):
    if timeout is None:
        return default_pg_timeout.total_seconds()
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


def _env_int(name, given):
    if given is not None and given != -1:
        return int(given)
    value = os.environ.get(name)
    return int(value) if value is not None else None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Make the default process group, as ``torch.distributed.init_process_group``.

    Under ``mpiexec -n N`` (or ``python -m ember_distributed.run``) rank and world size
    come from the process manager and an explicit ``rank``/``world_size`` must agree with
    them. A process started on its own (under ``mpiexec -n 1``) with ``world_size > 1``
    joins the others through ``init_method``: ``'env://'`` (MASTER_ADDR, MASTER_PORT,
    RANK, WORLD_SIZE, the default), ``'tcp://host:port'``, ``'file:///path'``, or a
    ``store`` (with ``rank`` and ``world_size``).

    Every rank first meets the others on the store, before MPI starts, so a rank that
    never comes makes the others raise ``DistBackendError`` naming it after ``timeout``;
    afterwards a watch on the store makes every survivor of a dead rank raise at its
    next collective (see the README's "Errors and faults").

    Args:
        backend: ``'mpi'``; ``'gloo'`` and ``'nccl'`` are accepted and also run on MPI.
        timeout: how long start-up and each operation wait for the peers (timedelta;
            default 30 min).
    """
    global _world, _generation
    if _world is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    backend = Backend.UNDEFINED if backend is None else Backend(backend)  # PyTorch's answer when none is named
    if store is not None and init_method is not None:
        raise ValueError("Cannot specify both init_method and store.")
    seconds = _seconds(timeout)
    _generation += 1
    launched = launched_world()
    if launched is not None and launched[1] > 1:
        my_rank, size = launched
        _check_matches("world_size", world_size, size)
        _check_matches("rank", rank, my_rank)
        rendezvous = store if store is not None else rendezvous_store(
            init_method or "env://", my_rank, size, seconds, required=init_method is not None)
        group_store = meet(rendezvous, my_rank, size, seconds, _generation) if rendezvous is not None else None
        MPI = mpi()
        comm = guarded(MPI.COMM_WORLD, "init_process_group", seconds, MPI.COMM_WORLD.Dup)
        _health.start(_health_store(rendezvous, group_store, comm, my_rank, seconds), my_rank, size, seconds)
    else:
        size = _env_int("WORLD_SIZE", world_size)
        if (store is not None or init_method is not None and init_method.startswith(("tcp://", "file://"))) \
                and size is None:
            raise ValueError("world_size must be given (or WORLD_SIZE set) with init_method "
                             f"{init_method!r}" if store is None else "world_size must be given with store")
        size = 1 if size is None else size
        if size == 1:
            _check_matches("rank", _env_int("RANK", rank), 0)
            _world = ProcessGroup(mpi().COMM_SELF.Dup(), [0], seconds, backend)
            return
        my_rank = _env_int("RANK", rank)
        if my_rank is None:
            raise ValueError("rank must be given (or RANK set) when world_size > 1")
        if not 0 <= my_rank < size:
            raise ValueError(f"Invalid rank {my_rank}: rank must be in [0, {size})")
        check_process_manager(init_method or "env://", size)
        rendezvous = store if store is not None else rendezvous_store(
            init_method or "env://", my_rank, size, seconds, required=True)
        group_store = meet(rendezvous, my_rank, size, seconds, _generation)
        health_store = _health_store(rendezvous, group_store, None, my_rank, seconds)
        _health.start(health_store, my_rank, size, seconds)
        comm = join(group_store, my_rank, size, seconds)
        if isinstance(rendezvous, FileStore):
            rendezvous.close()  # the last rank to leave removes the file
    _health.set_exit_comm(guarded(comm, "init_process_group", seconds, comm.Dup))
    _world = ProcessGroup(comm, range(comm.Get_size()), seconds, backend)


def _health_store(rendezvous, group_store, comm, rank, seconds):
    """The TCPStore the health watch runs on: the rendezvous store when it is one, else
    one that rank 0 serves on a free port, its address passed through the group's store
    (or, with no store at all, through MPI)."""
    if isinstance(rendezvous, TCPStore):
        return rendezvous
    served = serve_health_store(seconds) if rank == 0 else None
    address = f"{served.host}:{served.port}" if served is not None else ""
    if group_store is not None:
        if served is not None:
            group_store.set("health_store", address)
        address = group_store.get("health_store").decode()
    else:
        address = _broadcast_text(comm, address, seconds)
    if served is not None:
        return served
    host, port = address.rsplit(":", 1)
    return TCPStore(host, int(port), None, False, timeout=datetime.timedelta(seconds=seconds))


def _broadcast_text(comm, text, seconds):
    """Rank 0's ``text`` on every rank of ``comm`` (fixed-size, so one polled Ibcast does)."""
    buffer = np.zeros(256, dtype=np.uint8)
    data = text.encode()
    buffer[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    Work([comm.Ibcast(buffer, root=0)], "init_process_group", seconds).wait()
    return bytes(buffer).rstrip(b"\0").decode()


def _check_matches(what, given, actual):
    if given is not None and given != -1 and int(given) != actual:
        raise ValueError(f"init_process_group got {what}={given}, but MPI started this process with "
                         f"{what} {actual} (mpiexec decides ranks and size)")


def _default():
    if _world is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _world


def resolve(group):
    """The ProcessGroup for a ``group=`` argument (None: the default group)."""
    return _default() if group is None else group


def is_initialized():
    """True once ``init_process_group`` has run (and not been destroyed)."""
    return _world is not None


def is_available():
    """True: ember_distributed is usable when mpi4py is installed."""
    return importlib.util.find_spec("mpi4py") is not None


def is_mpi_available():
    return is_available()


def is_gloo_available():
    return False


def is_nccl_available():
    return False


def destroy_process_group(group=None):
    """Free a group's communicator; with no argument, the default group (and all others)."""
    global _world
    target = _default() if group is None else group
    if target is _world:
        _world = None
        _health.stop()
    if target.comm is not None:
        target.comm.Free()
        target.comm = None


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None):
    """A group of some ranks of the world; every rank of the world must call it.

    Returns the new ProcessGroup on its members and ``GroupMember.NON_GROUP_MEMBER``
    elsewhere, as PyTorch does.
    """
    world = _default()
    members = sorted(set(range(world.size()) if ranks is None else (int(r) for r in ranks)))
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError(f"Invalid rank {r} in new_group ranks: the world has {world.size()} ranks")
    me = world.rank()
    MPI = mpi()
    color = 0 if me in members else MPI.UNDEFINED
    comm = guarded(world.comm, "new_group", world.timeout,
                   lambda: world.comm.Split(color, members.index(me) if me in members else 0))
    if me not in members:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(comm, members, world.timeout if timeout is None else _seconds(timeout),
                        world.backend if backend is None else Backend(backend))


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None, pg_options=None,
                                 group_desc=None):
    """Groups of the given rank lists, made together; every rank of the world must call it.

    Returns ``(cur_subgroup, subgroups)``: the group this rank belongs to (None if it is in
    none) and one entry per list, as PyTorch: the group where this rank is a member,
    ``GroupMember.NON_GROUP_MEMBER`` elsewhere.
    """
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    seen = {}
    for ranks in ranks_per_subgroup_list:
        for rank in ranks:
            if rank in seen:
                raise ValueError(f"Rank {rank} has appeared in both subgroup {seen[rank]} and {ranks}")
            seen[rank] = ranks
    world = _default()
    me = world.rank()
    mine = next((i for i, ranks in enumerate(ranks_per_subgroup_list) if me in ranks), None)
    MPI = mpi()
    # One Split makes every subgroup at once: the colour is the index of the rank's list.
    members = sorted(ranks_per_subgroup_list[mine]) if mine is not None else []
    comm = guarded(world.comm, "new_subgroups", world.timeout,
                   lambda: world.comm.Split(MPI.UNDEFINED if mine is None else mine,
                                            members.index(me) if members else 0))
    subgroup = None
    if mine is not None:
        subgroup = ProcessGroup(comm, members, world.timeout if timeout is None else _seconds(timeout),
                                world.backend if backend is None else Backend(backend))
    return subgroup, [subgroup if i == mine else GroupMember.NON_GROUP_MEMBER
                      for i in range(len(ranks_per_subgroup_list))]


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None, group_desc=None):
    """Split ``group`` (the world by default) into consecutive subgroups of ``group_size`` ranks.

    Returns ``(cur_subgroup, subgroups)`` as PyTorch does.

    >>> # on 4 ranks: cur, _ = dist.new_subgroups(2)  -> ranks [0, 1] and [2, 3]
    """
    if group_size is None:
        raise ValueError("Default group size only takes effect when CUDA is available.If your subgroup using a "
                         "backend that does not depend on CUDA,please pass in 'group_size' correctly.")
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    world_size = get_world_size(group)
    if world_size < group_size:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size ({world_size})")
    if world_size % group_size != 0:
        raise ValueError(f"The world size ({world_size}) must be divisible by 'group_size={group_size}'")
    ranks = get_process_group_ranks(resolve(group))
    return new_subgroups_by_enumeration([ranks[i:i + group_size] for i in range(0, len(ranks), group_size)],
                                        timeout=timeout, backend=backend)


def get_rank(group=None):
    """This process's rank in ``group`` (the world by default); -1 if not a member."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).rank()


def get_world_size(group=None):
    """The number of processes in ``group`` (the world by default); -1 if not a member."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).size()


def get_backend(group=None):
    """The backend name the group was made with ('gloo', 'nccl', 'mpi'; 'undefined' when
    none was named, as PyTorch answers); every group runs on MPI whatever its name."""
    return resolve(group).backend


def get_process_group_ranks(group):
    """The global ranks of a group's members."""
    return list(resolve(group).ranks)


def get_global_rank(group, group_rank):
    """The global rank of ``group_rank`` in ``group``."""
    return resolve(group).ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank within ``group`` of ``global_rank``."""
    return resolve(group).group_rank(global_rank)
