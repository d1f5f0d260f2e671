"""One FSDP unit: the parameters a wrapped module owns, stored as this rank's shards.

Layout. Each parameter is cut along its first dimension into ``N`` equal chunks (the last
padded), as ``torch.chunk`` does; rank r keeps chunk r of every parameter of the unit,
side by side in one flat array (its *shard*, padded segments of ``chunk * row`` elements).
The full buffer holds the parameters one after the other, each padded to ``N * chunk``
rows, so that an all-gather of one parameter's segments lands, rank by rank, exactly where
its rows go: the gather writes the full parameters in place, with no copy out of a
rank-major staging buffer. Gradients travel the same way in reverse: a reduce-scatter per
parameter, straight from the gradient autograd produced (padded only when the rows do not
divide evenly) into the parameter's segment of the shard gradient. The collectives of a
unit are posted together and waited for once.

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

import ctypes
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


# Transparent huge pages: refilling 4 MB of released 4 KB pages costs ~1,000 page faults
# (measured 7.8 ms on this VM, against 0.16 ms to overwrite resident memory); in 2 MB pages,
# two faults (0.31 ms). The kernel backs only whole aligned 2 MB extents with huge pages,
# so a small unit's buffer stays in small pages and nothing is wasted.
_HUGE_PAGE = 2 << 20


class _FullBuffer:
    """Host memory for a unit's full parameters that can be released and refilled in place."""

    def __init__(self, numel, dtype):
        nbytes = max(1, numel * np.dtype(dtype).itemsize)
        huge = nbytes >= _HUGE_PAGE and hasattr(mmap, "MADV_HUGEPAGE")
        # over-allocate by one huge page to start the array on a 2 MB boundary (address space
        # only: untouched pages take no memory)
        self._map = mmap.mmap(-1, nbytes + (_HUGE_PAGE if huge else 0),
                              flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        offset = 0
        if huge:
            address = ctypes.addressof(ctypes.c_char.from_buffer(self._map))
            offset = -address % _HUGE_PAGE
            self._map.madvise(mmap.MADV_HUGEPAGE)
        self.array = np.frombuffer(self._map, dtype=dtype, count=numel, offset=offset)

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
            full_offset += spec.segment * self.world  # padded to world * chunk rows
        self.shard_numel, self.full_numel = shard_offset, full_offset
        self.requires_grad = bool(params) and params[0][2].requires_grad
        self._full = _FullBuffer(self.full_numel, self.param_dtype.np)
        self._full_padded = [self._full.array[s.full_offset:s.full_offset + s.segment * self.world]
                             for s in self.specs]
        self.full_views = [padded[:s.numel].reshape(s.shape) for s, padded in zip(self.specs, self._full_padded)]
        self.resident = False
        self.sync_gradients = True
        self._unsynced_grad = None  # per parameter: gradients accumulated under no_sync, not yet reduced
        self._pending = None  # a gather posted ahead of use (prefetch), not yet waited for
        self.after_backward = None  # called once this unit's gradients are reduced (BACKWARD_POST)

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

    def segments(self, flat):
        """Per-parameter padded segments (views) of a flat shard."""
        return [flat[s.shard_offset:s.shard_offset + s.segment] for s in self.specs]

    # --- gather and free ------------------------------------------------------------------

    @staticmethod
    def _send_segment(spec, local, dtype):
        """``local`` (this rank's chunk of one parameter, padded or not) as a contiguous
        segment of ``chunk * row`` elements in ``dtype``: the array itself when it already is."""
        local = np.asarray(local).reshape(-1)
        if local.size == spec.segment and local.dtype == dtype and local.flags.c_contiguous:
            return local
        segment = np.zeros(spec.segment, dtype=dtype)
        n = min(local.size, spec.segment)
        segment[:n] = local[:n]
        return segment

    def _post_gather(self, locals_, outputs, dtype):
        """Post one all-gather per parameter into ``outputs`` (padded, param-major); returns the Work."""
        sends = [self._send_segment(spec, local, dtype) for spec, local in zip(self.specs, locals_)]
        if self.world == 1:
            for send, out in zip(sends, outputs):
                out[...] = send
            return Work([], "", 0)
        pg = self.shard_group
        requests = [pg.comm.Iallgather(send.view(np.uint8), out.view(np.uint8)) for send, out in zip(sends, outputs)
                    if send.size]
        # the Work holds the sends (its finish callback) so that they outlive the requests
        return Work(requests, f"FSDP all_gather of parameters on ranks {pg.ranks}", pg.timeout,
                    finish=lambda keep=sends: None)

    def gather(self, locals_):
        """All-gather this rank's chunks into the full buffer (in ``param_dtype``).

        ``locals_``: one array per parameter, this rank's chunk (the flat shard's padded
        segments, or each parameter's own chunk).
        """
        self.start_gather(locals_)
        self.wait_gather()

    def start_gather(self, locals_):
        """Post the all-gather without waiting for it (prefetch); ``wait_gather`` finishes it."""
        if self._pending is None and not self.resident:
            self._pending = self._post_gather(locals_, self._full_padded, self.param_dtype.np)

    def wait_gather(self):
        """Finish a gather posted by ``start_gather``; the full parameters are then resident."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.wait()
            self.resident = True

    def gather_full(self, locals_):
        """The full parameters in the shards' own dtype, as new arrays (for state dicts)."""
        outputs = [np.empty(s.segment * self.world, dtype=self.dtype.np) for s in self.specs]
        self._post_gather(locals_, outputs, self.dtype.np).wait()
        return [out[:s.numel].reshape(s.shape) for s, out in zip(self.specs, outputs)]

    def gather_param(self, spec, local):
        """One full tensor from every rank's chunk ``local`` of it (a parameter's, or state
        shaped like it, e.g. Adam's ``exp_avg``), in ``local``'s dtype, as a new array."""
        local = np.asarray(local)
        out = np.empty(spec.segment * self.world, dtype=local.dtype)
        send = self._send_segment(spec, local, local.dtype)
        if self.world == 1:
            out[...] = send
        elif send.size:
            pg = self.shard_group
            Work([pg.comm.Iallgather(send.view(np.uint8), out.view(np.uint8))],
                 f"FSDP all_gather of a full state on ranks {pg.ranks}", pg.timeout).wait()
        return out[:spec.numel].reshape(spec.shape)

    def release(self):
        """Free the full parameters' memory (reads as zeros until the next gather)."""
        self.wait_gather()  # never hand back pages that a posted gather is writing into
        self._full.release()
        self.resident = False

    # --- gradients ------------------------------------------------------------------------

    def _padded_gradient(self, spec, grad, wide):
        """A full gradient as ``world * chunk`` rows in ``wide`` (rounded to ``reduce_dtype``
        first): autograd's own array when it already has that shape and dtype (no copy),
        else a zero-padded copy."""
        if grad is None:
            return np.zeros(spec.segment * self.world, dtype=wide)
        values = grad.detach().cpu().contiguous().numpy().reshape(-1).astype(self.reduce_dtype.np, copy=False)
        if values.size == spec.segment * self.world:
            return values.astype(wide, copy=False)
        padded = np.zeros(spec.segment * self.world, dtype=wide)
        padded[:spec.numel] = values
        return padded

    def reduce_gradients(self, grads):
        """Sum the full gradients over the ranks and keep this rank's chunk, averaged.

        Returns the flat shard gradient (NumPy, the shard's dtype), or None under
        ``no_sync`` (the gradients are kept, unsharded, for the next synced backward).
        """
        wide = reduction_dtype(self.reduce_dtype) or self.reduce_dtype.np
        padded = [self._padded_gradient(spec, g, wide) for spec, g in zip(self.specs, grads)]
        if self._unsynced_grad is not None:
            padded = [p + u for p, u in zip(padded, self._unsynced_grad)]
        if not self.sync_gradients:
            # keep copies: autograd may reuse the arrays it handed us
            self._unsynced_grad = [np.array(p) for p in padded]
            return None
        self._unsynced_grad = None
        mine = np.empty(self.shard_numel, dtype=wide)
        outputs = self.segments(mine)
        pg = self.shard_group
        if self.world == 1:
            for send, out in zip(padded, outputs):
                out[...] = send
        else:
            Work([pg.comm.Ireduce_scatter_block(send, out, op=mpi().SUM) for send, out in zip(padded, outputs)
                  if out.size],
                 f"FSDP reduce_scatter of gradients on ranks {pg.ranks}", pg.timeout).wait()
        replicas = 1
        if self.replicate_group is not None and self.replicate_group.size() > 1:
            rg = self.replicate_group
            replicas = rg.size()
            Work([rg.comm.Iallreduce(mpi().IN_PLACE, mine, op=mpi().SUM)],
                 f"FSDP all_reduce of gradients over replicas {rg.ranks}", rg.timeout).wait()
        mine /= self.world * replicas
        return mine.astype(self.dtype.np, copy=False)


class Unshard(ember_autograd.Function):
    """Shards in, full parameters out; backward reduce-scatters the full gradients.

    ``shards`` are the tensors the optimizer steps: one flat shard (the wrapper API) or one
    chunk per parameter (``fully_shard``); ``layout.locals`` gives each parameter's chunk
    to send, ``layout.split`` turns the flat shard gradient back into the shards' gradients.
    """

    @staticmethod
    def forward(ctx, unit, layout, *shards):
        ctx.unit, ctx.layout, ctx.n_shards = unit, layout, len(shards)
        unit.start_gather(layout.locals(shards))  # no-op when a prefetch already posted it
        unit.wait_gather()
        return tuple(ember_tensor.from_numpy(view) for view in unit.full_views)

    @staticmethod
    def backward(ctx, *grads):
        unit = ctx.unit
        flat = unit.reduce_gradients(grads)
        unit.release()
        if unit.after_backward is not None:
            unit.after_backward()
        if flat is None:  # no_sync: nothing reaches the shards yet
            return (None, None) + (None,) * ctx.n_shards
        return (None, None) + tuple(ctx.layout.split(flat))
