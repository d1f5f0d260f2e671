"""One FSDP unit: the parameters a wrapped module owns, stored as this rank's shards.

Layout. Each parameter is cut along its first dimension into ``N`` equal chunks (the last
padded), as ``torch.chunk`` does; rank r keeps chunk r of every parameter of the unit,
side by side in one flat array (its *shard*, padded segments of ``chunk * row`` elements).
An all-gather of the shards gives the chunks rank-major; they are copied out into one
param-major buffer holding the full parameters. A reduce-scatter of the gradients, packed
the same way, gives each rank the summed gradient of its own chunks.

Freeing. The full buffer is an anonymous private memory mapping: after use its pages are
given back to the system (``madvise(MADV_DONTNEED)``), the address range staying valid,
and the next gather writes into it again. This is PyTorch's ``storage.resize_(0)`` at the
OS level: the tensors that autograd saved for backward keep pointing at the same memory,
which the unit fills again before its backward runs (a hook on its forward outputs), so
FULL_SHARD holds a unit's full parameters only while that unit computes.

Autograd. ``_Unshard`` is an autograd Function from the shards to the full parameters:
forward all-gathers, backward reduce-scatters (and, for hybrid sharding, all-reduces over
the replicas) and averages, so the gradient lands on the shards that the optimizer steps.
"""

import math
import mmap

import numpy as np

import ember_autograd
import ember_tensor

from .._mpi import mpi, reduction_dtype
from .._work import Work

__all__ = []


class _ParamSpec:
    """Where one parameter lives in the shard and in the full buffer."""

    __slots__ = ("module", "name", "shape", "rows", "row", "chunk", "local_rows", "shard_offset", "full_offset",
                 "requires_grad")

    def __init__(self, module, name, param, world, rank, shard_offset, full_offset):
        self.module, self.name = module, name
        self.shape = tuple(param.shape)
        self.rows = self.shape[0] if self.shape else 1
        self.row = param.numel() // self.rows if self.rows else 0
        self.chunk = math.ceil(self.rows / world)
        self.local_rows = max(0, min(self.chunk, self.rows - rank * self.chunk))
        self.shard_offset, self.full_offset = shard_offset, full_offset
        self.requires_grad = param.requires_grad

    @property
    def segment(self):
        """Elements this parameter takes in every rank's shard (its chunk, padded)."""
        return self.chunk * self.row

    @property
    def numel(self):
        return self.rows * self.row

    @property
    def local_shape(self):
        """The shape of this rank's chunk (``torch.chunk``'s, empty past the last chunk)."""
        return (self.local_rows,) + self.shape[1:] if self.shape else (self.local_rows,)


class _FullBuffer:
    """Host memory for a unit's full parameters that can be released and refilled in place."""

    def __init__(self, numel, dtype):
        nbytes = max(1, numel * np.dtype(dtype).itemsize)
        self._map = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self.array = np.frombuffer(self._map, dtype=dtype, count=numel)

    def release(self):
        """Give the pages back to the system; the memory reads as zeros until written again."""
        self._map.madvise(mmap.MADV_DONTNEED)


class ShardedUnit:
    """The shards, the full buffer and the collectives of one FSDP unit.

    Args:
        params: ``(module, name, parameter)`` of the parameters the unit owns.
        shard_group: the ranks the parameters are sharded over.
        replicate_group: for hybrid sharding, the ranks holding the same shard (or None).
        param_dtype: dtype of the gathered parameters (compute), default theirs.
        reduce_dtype: dtype gradients are reduced in, default ``param_dtype``.
        reshard_after_forward: free the full parameters after forward (FULL_SHARD) or
            keep them until backward (SHARD_GRAD_OP).
    """

    def __init__(self, params, shard_group, replicate_group=None, param_dtype=None, reduce_dtype=None,
                 reshard_after_forward=True):
        dtypes = {p.dtype for _, _, p in params}
        if len(dtypes) > 1:
            raise ValueError(f"FSDP unit has parameters of different dtypes {sorted(map(str, dtypes))}: wrap "
                             "them in separate units")
        if len({p.requires_grad for _, _, p in params}) > 1:
            raise ValueError("FSDP does not support wrapping a mix of frozen and non-frozen parameters in one "
                             "unit (use_orig_params=False): wrap them in separate units")
        self.shard_group, self.replicate_group = shard_group, replicate_group
        self.world, self.rank = shard_group.size(), shard_group.rank()
        self.dtype = next(iter(dtypes))
        self.param_dtype = param_dtype or self.dtype
        self.reduce_dtype = reduce_dtype or self.param_dtype
        self.reshard_after_forward = reshard_after_forward
        self.specs, shard_offset, full_offset = [], 0, 0
        for module, name, p in params:
            spec = _ParamSpec(module, name, p, self.world, self.rank, shard_offset, full_offset)
            self.specs.append(spec)
            shard_offset += spec.segment
            full_offset += spec.numel
        self.shard_numel, self.full_numel = shard_offset, full_offset
        self.requires_grad = bool(params) and params[0][2].requires_grad
        self._full = _FullBuffer(self.full_numel, self.param_dtype.np)
        self.full_views = [self._full.array[s.full_offset:s.full_offset + s.numel].reshape(s.shape)
                           for s in self.specs]
        self.resident = False
        self.sync_gradients = True
        self._unsynced_grad = None  # gradients accumulated under no_sync, not yet reduced

    # --- shards ---------------------------------------------------------------------------

    def shard_of(self, spec, full):
        """This rank's chunk of a full parameter value (a NumPy array), unpadded."""
        flat = np.asarray(full).reshape(spec.rows, spec.row)
        start = self.rank * spec.chunk
        return flat[start:start + spec.local_rows].reshape(spec.local_shape)

    def pack(self, shards, dtype=None):
        """The flat shard (padded segments) from this rank's per-parameter chunks."""
        flat = np.zeros(self.shard_numel, dtype=dtype or self.param_dtype.np)
        for spec, shard in zip(self.specs, shards):
            n = spec.local_rows * spec.row
            flat[spec.shard_offset:spec.shard_offset + n] = np.asarray(shard).reshape(-1)
        return flat

    def unpack(self, flat):
        """Per-parameter chunks (views) of a flat shard."""
        return [flat[s.shard_offset:s.shard_offset + s.local_rows * s.row].reshape(s.local_shape)
                for s in self.specs]

    # --- gather and free ------------------------------------------------------------------

    def _all_gather(self, flat_shard, dtype):
        """Every rank's flat shard, rank-major: an array of (world, shard_numel)."""
        send = np.ascontiguousarray(flat_shard, dtype=dtype)
        if self.world == 1:
            return send.reshape(1, -1)
        gathered = np.empty((self.world, self.shard_numel), dtype=send.dtype)
        pg = self.shard_group
        Work([pg.comm.Iallgather(send.view(np.uint8), gathered.reshape(-1).view(np.uint8))],
             f"FSDP all_gather of parameters on ranks {pg.ranks}", pg.timeout).wait()
        return gathered

    def _copy_out(self, gathered, spec):
        """One parameter's rows of a rank-major gather (a view, padding dropped)."""
        rows = gathered[:, spec.shard_offset:spec.shard_offset + spec.segment]
        return rows.reshape(self.world * spec.chunk, spec.row)[:spec.rows].reshape(spec.shape)

    def gather(self, flat_shard):
        """All-gather the flat shard into the full buffer (param-major, in ``param_dtype``)."""
        gathered = self._all_gather(flat_shard, self.param_dtype.np)
        for spec, full in zip(self.specs, self.full_views):
            full[...] = self._copy_out(gathered, spec)
        self.resident = True

    def gather_full(self, flat_shard):
        """The full parameters in the shards' own dtype, as new arrays (for state dicts)."""
        gathered = self._all_gather(flat_shard, self.dtype.np)
        return [np.array(self._copy_out(gathered, spec)) for spec in self.specs]

    def release(self):
        """Free the full parameters' memory (reads as zeros until the next gather)."""
        self._full.release()
        self.resident = False

    # --- gradients ------------------------------------------------------------------------

    def reduce_gradients(self, grads):
        """Sum the full gradients over the ranks and keep this rank's chunk, averaged.

        Returns the flat shard gradient (NumPy, the shard's dtype), or None under
        ``no_sync`` (the gradients are kept, unsharded, for the next synced backward).
        """
        wide = reduction_dtype(self.reduce_dtype) or self.reduce_dtype.np
        packed = np.zeros((self.world, self.shard_numel), dtype=wide)
        for spec, grad in zip(self.specs, grads):
            if grad is None:
                continue
            values = grad.detach().cpu().contiguous().numpy().astype(self.reduce_dtype.np, copy=False)
            padded = np.zeros((self.world * spec.chunk, spec.row), dtype=wide)
            padded[:spec.rows] = values.reshape(spec.rows, spec.row)
            packed[:, spec.shard_offset:spec.shard_offset + spec.segment] = padded.reshape(self.world, -1)
        if self._unsynced_grad is not None:
            packed += self._unsynced_grad
        if not self.sync_gradients:
            self._unsynced_grad = packed
            return None
        self._unsynced_grad = None
        mine = np.empty(self.shard_numel, dtype=wide)
        pg = self.shard_group
        if self.world == 1:
            mine[...] = packed[0]
        else:
            Work([pg.comm.Ireduce_scatter_block(packed.reshape(-1), mine, op=mpi().SUM)],
                 f"FSDP reduce_scatter of gradients on ranks {pg.ranks}", pg.timeout).wait()
        replicas = 1
        if self.replicate_group is not None and self.replicate_group.size() > 1:
            rg = self.replicate_group
            replicas = rg.size()
            Work([rg.comm.Iallreduce(mpi().IN_PLACE, mine, op=mpi().SUM)],
                 f"FSDP all_reduce of gradients over replicas {rg.ranks}", rg.timeout).wait()
        mine /= self.world * replicas
        return mine.astype(self.dtype.np)


class Unshard(ember_autograd.Function):
    """Shards in, full parameters out; backward reduce-scatters the full gradients.

    ``shards`` are the tensors the optimizer steps: one flat shard (the wrapper API) or one
    chunk per parameter (``fully_shard``); ``layout.pack``/``layout.split`` convert between
    them and the flat shard that travels.
    """

    @staticmethod
    def forward(ctx, unit, layout, *shards):
        ctx.unit, ctx.layout, ctx.n_shards = unit, layout, len(shards)
        unit.gather(layout.pack(shards))
        return tuple(ember_tensor.from_numpy(view) for view in unit.full_views)

    @staticmethod
    def backward(ctx, *grads):
        unit = ctx.unit
        flat = unit.reduce_gradients(grads)
        unit.release()
        if flat is None:  # no_sync: nothing reaches the shards yet
            return (None, None) + (None,) * ctx.n_shards
        return (None, None) + tuple(ctx.layout.split(flat))
