"""Point to point: send, recv, isend, irecv, and batches of them (``batch_isend_irecv``).

``src``/``dst`` are global ranks; ``group_src``/``group_dst`` name the peer by its rank in
``group`` instead, as in PyTorch (one or the other, not both).
"""

from ._group import resolve
from ._mpi import HostBuffer, mpi
from ._work import Work

__all__ = ["send", "recv", "isend", "irecv", "P2POp", "batch_isend_irecv"]


def _group_peer(pg, rank, group_rank, what):
    """The peer's rank within ``pg``, from a global rank or a group rank (PyTorch's errors)."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError("Can't specify both group_rank and global_rank")
        peer = int(group_rank)
        if not 0 <= peer < pg.size():
            raise ValueError(f"Group rank {peer} is not part of group {pg!r}")
    elif rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    else:
        peer = pg.group_rank(rank)
    if peer == pg.rank():
        raise ValueError(f"Invalid {what} rank: {what} rank should not be the same as the rank of the "
                         "current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending ``tensor`` to rank ``dst``; returns a Work."""
    pg = resolve(group)
    peer = _group_peer(pg, dst, group_dst, "destination")
    buffer = HostBuffer(tensor)
    data = buffer.array.reshape(-1).view("uint8")
    request = pg.comm.Isend(data, dest=peer, tag=tag)
    return Work([request], f"send to rank {pg.ranks[peer]} (tag {tag})", pg.timeout, lambda: data)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst``; returns when the data has left this process."""
    isend(tensor, dst, group, tag, group_dst).wait()


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into ``tensor`` from rank ``src`` (any rank if both ``src`` and
    ``group_src`` are None); returns a Work."""
    pg = resolve(group)
    MPI = mpi()
    anyone = src is None and group_src is None
    peer = MPI.ANY_SOURCE if anyone else _group_peer(pg, src, group_src, "source")
    buffer = HostBuffer(tensor, read=False)
    data = buffer.array.reshape(-1).view("uint8")
    status = MPI.Status()
    request = pg.comm.Irecv(data, source=peer, tag=tag)
    description = f"recv from rank {'any' if anyone else pg.ranks[peer]} (tag {tag})"

    def finish():
        got = status.Get_count(MPI.BYTE)
        if got != data.size:
            raise RuntimeError(f"{description}: received {got} bytes into a tensor of {data.size} bytes "
                               f"({tensor.dtype}, shape {tuple(tensor.shape)}); sender and receiver must "
                               f"use tensors of the same size and dtype")
        buffer.finish()
        return pg.ranks[status.Get_source()]
    return Work([request], description, pg.timeout, finish, statuses=[status])


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank if None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    return work.result()


class P2POp:
    """One point-to-point operation for ``batch_isend_irecv``: ``op`` is ``isend`` or ``irecv``.

    Args:
        op: ``isend`` or ``irecv`` (the functions of this package).
        tensor: the tensor to send or receive into.
        peer: the other side's global rank (or ``group_peer``: its rank in ``group``).
        group: the process group (default: the world).
        tag: matches sends with receives.
    """

    def __new__(cls, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        if not hasattr(tensor, "dtype") or not hasattr(tensor, "shape"):
            raise TypeError(f"Invalid function argument. Expected parameter `tensor` of type torch.Tensor "
                            f"but got {type(tensor)} instead.")
        return object.__new__(cls)

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        self.op = op
        self.tensor = tensor
        self.group = resolve(group)
        if group_peer is not None:
            if peer is not None:
                raise ValueError("Can't specify both group_rank and global_rank")
            self.group_peer = int(group_peer)
            self.peer = self.group.ranks[self.group_peer]
        elif peer is None:
            raise ValueError("Must specify global_rank or group_rank")
        else:
            self.peer = int(peer)
            self.group_peer = self.group.group_rank(self.peer)
        self.tag = tag

    def __repr__(self):
        me = self.group.rank()
        src, dst = (me, self.group_peer) if self.op is isend else (self.group_peer, me)
        return (f"P2POp({self.op.__name__} pg={self.group.ranks}, group_src={src}, group_dst={dst},  "
                f"{tuple(self.tensor.shape)}, {self.tensor.dtype})")


def batch_isend_irecv(p2p_op_list):
    """Start every send and receive of ``p2p_op_list`` at once; returns their Works.

    All are posted before any is waited for, so a ring exchange (each rank sends to the
    next and receives from the previous) cannot deadlock whatever the order in the list.
    """
    if not isinstance(p2p_op_list, list) or not all(isinstance(op, P2POp) for op in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    group = p2p_op_list[0].group
    if not all(op.group is group for op in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    works = []
    for op in p2p_op_list:
        peer = {"group_dst" if op.op is isend else "group_src": op.group_peer}
        works.append(op.op(op.tensor, group=op.group, tag=op.tag, **peer))
    return works
