"""Collectives: all_reduce, broadcast, all_gather, gather, scatter, reduce_scatter, ...

Each one checks that every rank called the same operation on matching tensors (an
exchange of a few integers before the data moves: mismatched calls would otherwise
deadlock or silently corrupt), starts the MPI non-blocking form, and either waits
(``async_op=False``) or hands back a Work. Ranks given as ``src``/``dst`` are global
ranks, as in PyTorch, even with a sub-group.
"""

import time

import numpy as np

from ._group import resolve
from ._mpi import HostBuffer, mpi
from ._work import Work

__all__ = ["ReduceOp", "all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "gather",
           "scatter", "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_to_all_single", "barrier",
           "monitored_barrier", "all_gather_single", "reduce_scatter_single"]


class ReduceOp:
    """Reduction operators, as ``torch.distributed.ReduceOp``."""

    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"
    AVG = "avg"


_OPS = [ReduceOp.SUM, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX, ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR,
        ReduceOp.AVG]
_OPERATIONS = ["all_reduce", "reduce", "broadcast", "all_gather", "all_gather_into_tensor", "gather", "scatter",
               "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "barrier"]


def _mpi_op(op, dtype):
    """The MPI reduction for ``op`` on tensors of ``dtype``."""
    MPI = mpi()
    if op not in _OPS:
        raise ValueError(f"Unknown ReduceOp: {op!r}")
    if dtype.is_floating_point and op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
        raise RuntimeError(f"Cannot use ReduceOp.{op.upper()} with {dtype}: bitwise reductions take "
                           f"integer or bool tensors")
    if dtype.name == "bool":  # bool tensors reduce as logic, like PyTorch's gloo
        return {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.BOR: MPI.LOR, ReduceOp.PRODUCT: MPI.LAND,
                ReduceOp.MIN: MPI.LAND, ReduceOp.BAND: MPI.LAND, ReduceOp.BXOR: MPI.LXOR}[op]
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MIN: MPI.MIN,
            ReduceOp.MAX: MPI.MAX, ReduceOp.BAND: MPI.BAND, ReduceOp.BOR: MPI.BOR, ReduceOp.BXOR: MPI.BXOR}[op]


def _check_avg(op, dtype):
    if op == ReduceOp.AVG and not dtype.is_floating_point:
        raise RuntimeError(f"ReduceOp.AVG needs a floating point tensor, got {dtype}")


def _signature(operation, tensor=None, extra=0):
    """The integers every rank must agree on before ``operation`` moves data."""
    if tensor is None:
        return np.array([_OPERATIONS.index(operation), -1, -1, extra], dtype=np.int64)
    # Not hash(): it differs between processes (PYTHONHASHSEED).
    code = sum(ord(c) * 31 ** i for i, c in enumerate(tensor.dtype.name)) % (1 << 31)
    return np.array([_OPERATIONS.index(operation), code, tensor.numel(), extra], dtype=np.int64)


def _agree(pg, operation, signature):
    """Raise on every rank, naming the ranks, if the ranks' signatures differ."""
    gathered = np.empty((pg.size(), signature.size), dtype=np.int64)
    Work([pg.comm.Iallgather(signature, gathered)], f"{operation} on ranks {pg.ranks}", pg.timeout).wait()
    if (gathered == gathered[0]).all():
        return
    what = ["operation", "dtype", "number of elements", "root rank or reduction op"]
    differ = [what[i] for i in range(signature.size) if not (gathered[:, i] == gathered[0, i]).all()]
    calls = "; ".join(f"rank {pg.ranks[i]}: {_describe(row)}" for i, row in enumerate(gathered))
    raise RuntimeError(f"{operation}: the ranks of group {pg.ranks} called mismatched collectives "
                       f"(different {', '.join(differ)}): {calls}")


def _describe(row):
    operation = _OPERATIONS[row[0]] if 0 <= row[0] < len(_OPERATIONS) else "?"
    return operation if row[2] < 0 else f"{operation} of {row[2]} elements"


def _run(pg, operation, requests, finish, async_op):
    work = Work(requests, f"{operation} on ranks {pg.ranks}", pg.timeout, finish)
    if async_op:
        return work
    work.wait()
    return None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over all ranks of the group; every rank gets the result in place."""
    pg = resolve(group)
    _check_avg(op, tensor.dtype)
    mpi_op = _mpi_op(op, tensor.dtype)
    _agree(pg, "all_reduce", _signature("all_reduce", tensor, _OPS.index(op)))
    buffer = HostBuffer(tensor, for_reduction=True)
    # In place: no second buffer to allocate (and page-fault) and no copy back.
    request = pg.comm.Iallreduce(mpi().IN_PLACE, buffer.array, op=mpi_op)

    def finish():
        if op == ReduceOp.AVG:
            np.divide(buffer.array, pg.size(), out=buffer.array)
        return buffer.finish()
    return _run(pg, "all_reduce", [request], finish, async_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over the group into rank ``dst``'s tensor (others are unchanged)."""
    pg = resolve(group)
    _check_avg(op, tensor.dtype)
    mpi_op = _mpi_op(op, tensor.dtype)
    root = pg.group_rank(dst)
    _agree(pg, "reduce", _signature("reduce", tensor, root * len(_OPS) + _OPS.index(op)))
    buffer = HostBuffer(tensor, for_reduction=True)
    is_root = pg.rank() == root
    send = mpi().IN_PLACE if is_root else buffer.array
    request = pg.comm.Ireduce(send, buffer.array if is_root else None, op=mpi_op, root=root)

    def finish():
        if not is_root:
            return tensor
        if op == ReduceOp.AVG:
            np.divide(buffer.array, pg.size(), out=buffer.array)
        return buffer.finish()
    return _run(pg, "reduce", [request], finish, async_op)


def broadcast(tensor, src=0, group=None, async_op=False):
    """Copy rank ``src``'s tensor into ``tensor`` on every rank of the group."""
    pg = resolve(group)
    root = pg.group_rank(src)
    _agree(pg, "broadcast", _signature("broadcast", tensor, root))
    buffer = HostBuffer(tensor, read=pg.rank() == root)
    request = pg.comm.Ibcast(_bytes(buffer.array), root=root)
    return _run(pg, "broadcast", [request], buffer.finish, async_op)


def _bytes(array):
    """A byte view: moving data needs no MPI datatype (bfloat16 and float16 have none)."""
    return array.reshape(-1).view(np.uint8)


def _check_list(name, tensors, size, like):
    if len(tensors) != size:
        raise ValueError(f"{name} must have {size} tensors (one per rank of the group), got {len(tensors)}")
    for t in tensors:
        if t.dtype is not like.dtype or t.numel() != like.numel():
            raise ValueError(f"{name}: every tensor must match the input tensor ({like.dtype}, {like.numel()} "
                             f"elements), got {t.dtype} with {t.numel()} elements")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor``, gathered into ``tensor_list`` (one per rank) on every rank."""
    pg = resolve(group)
    _check_list("all_gather: tensor_list", tensor_list, pg.size(), tensor)
    _agree(pg, "all_gather", _signature("all_gather", tensor))
    source = HostBuffer(tensor)
    gathered = np.empty((pg.size(),) + source.array.shape, dtype=source.array.dtype)
    request = pg.comm.Iallgather(_bytes(source.array), _bytes(gathered))

    def finish():
        for out, part in zip(tensor_list, gathered):
            _write(out, part)
        return tensor_list
    return _run(pg, "all_gather", [request], finish, async_op)


def _write(tensor, values):
    buffer = HostBuffer(tensor, read=False)
    buffer.array[...] = values.reshape(buffer.array.shape)
    buffer.finish()


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor``."""
    pg = resolve(group)
    if output_tensor.numel() != input_tensor.numel() * pg.size() or output_tensor.dtype is not input_tensor.dtype:
        raise ValueError(f"all_gather_into_tensor: output tensor must have world size ({pg.size()}) times the "
                         f"input's {input_tensor.numel()} elements and its dtype {input_tensor.dtype}, got "
                         f"{output_tensor.numel()} elements of {output_tensor.dtype}")
    _agree(pg, "all_gather_into_tensor", _signature("all_gather_into_tensor", input_tensor))
    source = HostBuffer(input_tensor)
    out = HostBuffer(output_tensor, read=False)
    request = pg.comm.Iallgather(_bytes(source.array), _bytes(out.array))
    return _run(pg, "all_gather_into_tensor", [request], out.finish, async_op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (None elsewhere)."""
    pg = resolve(group)
    root = pg.group_rank(dst)
    is_root = pg.rank() == root
    if is_root:
        _check_list("gather: gather_list", gather_list or [], pg.size(), tensor)
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    _agree(pg, "gather", _signature("gather", tensor, root))
    source = HostBuffer(tensor)
    gathered = np.empty((pg.size(),) + source.array.shape, dtype=source.array.dtype) if is_root else None
    request = pg.comm.Igather(_bytes(source.array), _bytes(gathered) if is_root else None, root=root)

    def finish():
        if is_root:
            for out, part in zip(gather_list, gathered):
                _write(out, part)
        return gather_list
    return _run(pg, "gather", [request], finish, async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Rank ``src``'s ``scatter_list[i]`` into ``tensor`` on rank i."""
    pg = resolve(group)
    root = pg.group_rank(src)
    is_root = pg.rank() == root
    if is_root:
        _check_list("scatter: scatter_list", scatter_list or [], pg.size(), tensor)
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    _agree(pg, "scatter", _signature("scatter", tensor, root))
    out = HostBuffer(tensor, read=False)
    parts = np.stack([HostBuffer(t).array for t in scatter_list]) if is_root else None
    request = pg.comm.Iscatter(_bytes(parts) if is_root else None, _bytes(out.array), root=root)
    return _run(pg, "scatter", [request], out.finish, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list`` over ranks; rank i gets the reduction of every rank's ``input_list[i]``."""
    pg = resolve(group)
    _check_list("reduce_scatter: input_list", input_list, pg.size(), output)
    _check_avg(op, output.dtype)
    mpi_op = _mpi_op(op, output.dtype)
    _agree(pg, "reduce_scatter", _signature("reduce_scatter", output, _OPS.index(op)))
    stacked = np.stack([HostBuffer(t, for_reduction=True).array for t in input_list])
    return _reduce_scatter_block(pg, "reduce_scatter", stacked, HostBuffer(output, for_reduction=True, read=False),
                                 op, mpi_op, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (world size × output's elements) over ranks; rank i gets block i."""
    pg = resolve(group)
    if input.numel() != output.numel() * pg.size() or input.dtype is not output.dtype:
        raise ValueError(f"reduce_scatter_tensor: input tensor must have world size ({pg.size()}) times the "
                         f"output's {output.numel()} elements and its dtype {output.dtype}, got "
                         f"{input.numel()} elements of {input.dtype}")
    _check_avg(op, output.dtype)
    mpi_op = _mpi_op(op, output.dtype)
    _agree(pg, "reduce_scatter_tensor", _signature("reduce_scatter_tensor", output, _OPS.index(op)))
    source = HostBuffer(input, for_reduction=True)
    return _reduce_scatter_block(pg, "reduce_scatter_tensor", source.array,
                                 HostBuffer(output, for_reduction=True, read=False), op, mpi_op, async_op)


def _reduce_scatter_block(pg, operation, source, out, op, mpi_op, async_op):
    request = pg.comm.Ireduce_scatter_block(source.reshape(-1), out.array.reshape(-1), op=mpi_op)

    def finish():
        if op == ReduceOp.AVG:
            np.divide(out.array, pg.size(), out=out.array)
        return out.finish()
    return _run(pg, operation, [request], finish, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank i sends ``input_tensor_list[j]`` to rank j, which receives it as ``output_tensor_list[i]``."""
    pg = resolve(group)
    size = pg.size()
    if len(output_tensor_list) != size or len(input_tensor_list) != size:
        raise ValueError(f"all_to_all needs {size} input and {size} output tensors (one per rank)")
    _agree(pg, "all_to_all", _signature("all_to_all", None, size))
    sends = [_bytes(HostBuffer(t).array) for t in input_tensor_list]
    outs = [HostBuffer(t, read=False) for t in output_tensor_list]
    receives = [_bytes(o.array) for o in outs]
    send_counts = [s.size for s in sends]
    recv_counts = [r.size for r in receives]
    send = np.concatenate(sends) if sends else np.empty(0, np.uint8)
    recv = np.empty(sum(recv_counts), dtype=np.uint8)
    request = pg.comm.Ialltoallv([send, (send_counts, _offsets(send_counts))],
                                 [recv, (recv_counts, _offsets(recv_counts))])

    def finish():
        for o, r, start in zip(outs, receives, _offsets(recv_counts)):
            r[...] = recv[start:start + r.size]
            o.finish()
        return output_tensor_list
    return _run(pg, "all_to_all", [request], finish, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,
                      async_op=False):
    """all_to_all on single tensors split along dim 0 (equal splits unless sizes are given)."""
    pg = resolve(group)
    size = pg.size()
    in_splits = input_split_sizes or [input.shape[0] // size] * size
    out_splits = output_split_sizes or [output.shape[0] // size] * size
    return all_to_all(list(output.split(out_splits)), list(input.split(in_splits)), group=pg, async_op=async_op)


def _offsets(counts):
    return [int(v) for v in np.concatenate([[0], np.cumsum(counts)[:-1]])] if counts else []


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group has reached the barrier."""
    pg = resolve(group)
    if not async_op:
        _agree(pg, "barrier", _signature("barrier"))  # the exchange is itself a barrier
        return None
    return Work([pg.comm.Ibarrier()], f"barrier on ranks {pg.ranks}", pg.timeout)


# monitored_barrier's messages travel on the group's communicator with a tag of their own,
# far above the small tags programs use for their sends.
_MONITORED_BARRIER_TAG = 32_000


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not reach it within ``timeout``.

    Every rank reports to group rank 0, which waits for them all; a rank missing after
    ``timeout`` (a timedelta, or seconds; default: the group's) makes rank 0 raise a
    RuntimeError naming it (all missing ranks with ``wait_all_ranks=True``), and the
    others raise when rank 0's release does not come. On success rank 0 releases them.
    """
    pg = resolve(group)
    seconds = pg.timeout if timeout is None else (
        timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout))
    if pg.size() == 1:
        return None
    token = np.zeros(1, dtype=np.uint8)
    if pg.rank() != 0:
        release = np.zeros(1, dtype=np.uint8)
        Work([pg.comm.Isend(token, dest=0, tag=_MONITORED_BARRIER_TAG),
              pg.comm.Irecv(release, source=0, tag=_MONITORED_BARRIER_TAG)],
             f"[Rank {pg.ranks[pg.rank()]}]: monitored_barrier waiting for rank {pg.ranks[0]}", seconds).wait()
        return None
    deadline = time.monotonic() + seconds
    arrivals = {r: pg.comm.Irecv(np.zeros(1, dtype=np.uint8), source=r, tag=_MONITORED_BARRIER_TAG)
                for r in range(1, pg.size())}
    milliseconds = int(seconds * 1000)
    missing = []
    for r, request in arrivals.items():
        try:  # the timeout runs from the start: later ranks get what the earlier ones left
            Work([request], "monitored_barrier", max(0.0, deadline - time.monotonic())).wait()
        except RuntimeError:
            missing.append(r)
            if not wait_all_ranks:
                break
    if missing:
        for request in arrivals.values():
            if not request.Test():
                request.Cancel()
        if wait_all_ranks:
            names = ", ".join(str(pg.ranks[r]) for r in missing)
            raise RuntimeError(f"[Rank 0]: Ranks {names} failed to pass monitoredBarrier in {milliseconds} ms")
        raise RuntimeError(f"[Rank 0]: Rank {pg.ranks[missing[0]]} failed to pass monitoredBarrier in "
                           f"{milliseconds} ms")
    releases = [pg.comm.Isend(token, dest=r, tag=_MONITORED_BARRIER_TAG) for r in range(1, pg.size())]
    Work(releases, f"monitored_barrier release of group {pg.ranks}", seconds).wait()
    return None


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """PyTorch 2.13's name for `all_gather_into_tensor` (the same collective)."""
    return all_gather_into_tensor(output_tensor, input_tensor, group, async_op)


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """PyTorch 2.13's name for `reduce_scatter_tensor` (the same collective)."""
    return reduce_scatter_tensor(output, input, op, group, async_op)
