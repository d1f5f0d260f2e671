"""Collectives on picklable Python objects (``broadcast_object_list``, ``all_gather_object``, ...).

Objects travel pickled, as in PyTorch: only exchange objects between processes that
trust each other (the ranks of one job).
"""

import pickle

import numpy as np

from ._collectives import _agree, _signature
from ._group import resolve
from ._work import Work

__all__ = ["broadcast_object_list", "all_gather_object", "gather_object", "scatter_object_list"]


def _wait(pg, operation, request):
    Work([request], f"{operation} on ranks {pg.ranks}", pg.timeout).wait()


def _allgather_bytes(pg, operation, payload):
    """Every rank's byte string, in group-rank order."""
    _agree(pg, operation, _signature("all_gather"))
    sizes = np.empty(pg.size(), dtype=np.int64)
    _wait(pg, operation, pg.comm.Iallgather(np.array([len(payload)], dtype=np.int64), sizes))
    data = np.empty(int(sizes.sum()), dtype=np.uint8)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int).tolist()
    _wait(pg, operation, pg.comm.Iallgatherv(np.frombuffer(payload, np.uint8),
                                             [data, (sizes.tolist(), offsets)]))
    return [data[o:o + n].tobytes() for o, n in zip(offsets, sizes.tolist())]


def broadcast_object_list(object_list, src=0, group=None, device=None):
    """Replace ``object_list``'s items with rank ``src``'s, on every rank (in place)."""
    pg = resolve(group)
    root = pg.group_rank(src)
    _agree(pg, "broadcast", _signature("broadcast", None, root))
    payload = pickle.dumps(list(object_list)) if pg.rank() == root else b""
    size = np.array([len(payload)], dtype=np.int64)
    _wait(pg, "broadcast_object_list", pg.comm.Ibcast(size, root=root))
    data = np.frombuffer(payload, np.uint8).copy() if pg.rank() == root else np.empty(int(size[0]), np.uint8)
    _wait(pg, "broadcast_object_list", pg.comm.Ibcast(data, root=root))
    object_list[:] = pickle.loads(data.tobytes())


def all_gather_object(object_list, obj, group=None):
    """Every rank's ``obj`` into ``object_list`` (one slot per rank), on every rank."""
    pg = resolve(group)
    if len(object_list) != pg.size():
        raise ValueError(f"all_gather_object: object_list must have {pg.size()} slots, got {len(object_list)}")
    parts = _allgather_bytes(pg, "all_gather_object", pickle.dumps(obj))
    object_list[:] = [pickle.loads(p) for p in parts]


def gather_object(obj, object_gather_list=None, dst=0, group=None):
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst``."""
    pg = resolve(group)
    parts = _allgather_bytes(pg, "gather_object", pickle.dumps(obj))
    if pg.rank() == pg.group_rank(dst):
        object_gather_list[:] = [pickle.loads(p) for p in parts]


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0, group=None):
    """Rank ``src``'s ``scatter_object_input_list[i]`` into ``scatter_object_output_list[0]`` on rank i."""
    pg = resolve(group)
    objects = list(scatter_object_input_list or []) if pg.rank() == pg.group_rank(src) else None
    box = [objects]
    broadcast_object_list(box, src=src, group=pg)
    scatter_object_output_list[0] = box[0][pg.rank()]
