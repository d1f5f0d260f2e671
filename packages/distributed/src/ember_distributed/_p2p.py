"""Point to point: send, recv, isend, irecv (``src``/``dst`` are global ranks)."""

from ._group import resolve
from ._mpi import HostBuffer, mpi
from ._work import Work

__all__ = ["send", "recv", "isend", "irecv"]


def _peer(pg, rank, what):
    if rank == pg.ranks[pg.rank()]:
        raise ValueError(f"Invalid {what} rank {rank}: a process cannot {'send to' if what == 'destination' else 'receive from'} itself")
    return pg.group_rank(rank)


def isend(tensor, dst, group=None, tag=0):
    """Start sending ``tensor`` to rank ``dst``; returns a Work."""
    pg = resolve(group)
    peer = _peer(pg, dst, "destination")
    buffer = HostBuffer(tensor)
    data = buffer.array.reshape(-1).view("uint8")
    request = pg.comm.Isend(data, dest=peer, tag=tag)
    return Work([request], f"send to rank {dst} (tag {tag})", pg.timeout, lambda: data)


def send(tensor, dst, group=None, tag=0):
    """Send ``tensor`` to rank ``dst``; returns when the data has left this process."""
    isend(tensor, dst, group, tag).wait()


def irecv(tensor, src=None, group=None, tag=0):
    """Start receiving into ``tensor`` from rank ``src`` (any rank if None); returns a Work."""
    pg = resolve(group)
    MPI = mpi()
    peer = MPI.ANY_SOURCE if src is None else _peer(pg, src, "source")
    buffer = HostBuffer(tensor, read=False)
    data = buffer.array.reshape(-1).view("uint8")
    status = MPI.Status()
    request = pg.comm.Irecv(data, source=peer, tag=tag)
    description = f"recv from rank {'any' if src is None else src} (tag {tag})"

    def finish():
        got = status.Get_count(MPI.BYTE)
        if got != data.size:
            raise RuntimeError(f"{description}: received {got} bytes into a tensor of {data.size} bytes "
                               f"({tensor.dtype}, shape {tuple(tensor.shape)}); sender and receiver must "
                               f"use tensors of the same size and dtype")
        buffer.finish()
        return pg.ranks[status.Get_source()]
    return Work([request], description, pg.timeout, finish, statuses=[status])


def recv(tensor, src=None, group=None, tag=0):
    """Receive into ``tensor`` from rank ``src`` (any rank if None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag)
    return work.result()
