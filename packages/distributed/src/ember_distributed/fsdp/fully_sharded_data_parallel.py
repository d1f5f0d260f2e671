"""``FullyShardedDataParallel``: the wrapper API of FSDP.

``FSDP(model, auto_wrap_policy=...)`` makes units of the submodules the policy picks and
of the root (the parameters left over). Each unit's parameters become one flat shard per
rank (``_flat_param``, what ``parameters()`` gives the optimizer), gathered around the
unit's forward and backward (see _hooks.py and _unit.py). Inner units are hooked in
place, not replaced by wrapper objects: ember-distributed does not import ember-nn, so
only the returned root is a wrapper (with the module protocol, delegated, as DDP's).
"""

import contextlib

import numpy as np

import ember_tensor

from .._collectives import ReduceOp, all_reduce, broadcast
from .._group import ProcessGroup, resolve
from .._mpi import mpi
from .._work import guarded
from .._sharded_chunk import ShardedChunk
from . import _optim_state, _summon
from ._hooks import FlatLayout, UnitHooks, cast, map_tensors
from ._unit import ShardedUnit
from .api import (BackwardPrefetch, FullStateDictConfig, LocalStateDictConfig, ShardedStateDictConfig,
                  ShardingStrategy, StateDictSettings, StateDictType)
from .wrap import unit_modules

__all__ = ["FullyShardedDataParallel", "ShardedChunk"]


class FullyShardedDataParallel:
    """Shard ``module``'s parameters, gradients and optimizer state over the ranks.

    Args:
        module: the model (PyTorch's module protocol: ``named_modules``, ``named_parameters``,
            forward hooks).
        process_group: the group to shard over; for HYBRID_SHARD a pair
            ``(shard_group, replicate_group)``.
        sharding_strategy: a ShardingStrategy (default FULL_SHARD).
        auto_wrap_policy: which submodules become units (see ``fsdp.wrap``).
        mixed_precision: a MixedPrecision (compute in ``param_dtype``, reduce in ``reduce_dtype``).
        sync_module_states: broadcast rank 0's parameters and buffers before sharding.
        device_mesh: a DeviceMesh instead of ``process_group`` (2-D for HYBRID_SHARD:
            replicate over dimension 0, shard over dimension 1).
        backward_prefetch: BACKWARD_PRE (default) posts the all-gather of the unit backward
            reaches next before waiting for the current one's; BACKWARD_POST posts it after the
            current unit's reduce-scatter; None gathers each unit when it is reached.
        forward_prefetch: post the next unit's all-gather (in the order of the first
            forward) before waiting for the current one's.
        cpu_offload, limit_all_gathers, device_id, use_orig_params: accepted (ember's shards
            are in host memory).
    """

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None, auto_wrap_policy=None,
                 backward_prefetch=BackwardPrefetch.BACKWARD_PRE, mixed_precision=None, ignored_modules=None,
                 param_init_fn=None, device_id=None, sync_module_states=False, forward_prefetch=False,
                 limit_all_gathers=True, use_orig_params=False, ignored_states=None, device_mesh=None):
        self.module = module
        self.sharding_strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        self.mixed_precision = mixed_precision
        shard_group, replicate_group = _groups(self.sharding_strategy, process_group, device_mesh)
        self.process_group = shard_group
        self._replicate_group = replicate_group
        if sync_module_states:
            world = resolve(None)
            for t in [*module.parameters(), *module.buffers()]:
                broadcast(t.detach(), src=0, group=world)
        ignored = {id(p) for m in (ignored_modules or ()) for p in m.parameters()}
        ignored |= {id(p) for p in (ignored_states or ()) if not hasattr(p, "parameters")}
        param_dtype = reduce_dtype = None
        if mixed_precision is not None:
            param_dtype, reduce_dtype = mixed_precision.param_dtype, mixed_precision.reduce_dtype
            if mixed_precision.buffer_dtype is not None:
                for b in module.buffers():
                    if b.dtype.is_floating_point:
                        b.data = b.data.to(mixed_precision.buffer_dtype)
        reshard = self.sharding_strategy in (ShardingStrategy.FULL_SHARD, ShardingStrategy.HYBRID_SHARD)
        # The keys of the unwrapped model's state_dict, in order, before any parameter moves.
        self._state_keys = list(module.state_dict().keys())
        paths = {id(m): path for path, m in module.named_modules()}
        self._units, self._hooks, self._flat_params, self._qualified = [], [], [], {}
        owned = set(ignored)
        for unit_module in unit_modules(module, auto_wrap_policy):
            params = []
            for path, owner in unit_module.named_modules():
                for name, p in list(owner.named_parameters(recurse=False)):
                    if id(p) in owned:
                        continue
                    owned.add(id(p))
                    params.append((owner, name, p))
                    self._qualified[(id(owner), name)] = _join(paths[id(owner)], name)
            if not params:
                continue
            unit = ShardedUnit(params, shard_group, replicate_group, param_dtype, reduce_dtype, reshard)
            flat = unit.pack([unit.shard_of(spec, p.detach().cpu().numpy()) for spec, (_, _, p)
                              in zip(unit.specs, params)], dtype=unit.dtype.np)
            flat_param = type(params[0][2])(ember_tensor.from_numpy(flat), requires_grad=unit.requires_grad)
            for owner, name, _ in params:
                delattr(owner, name)  # the unit's full parameters stand in for them during forward
            input_dtype = param_dtype if mixed_precision is not None and mixed_precision.cast_forward_inputs else None
            hooks = UnitHooks(unit_module, unit, FlatLayout(unit), lambda fp=flat_param: [fp],
                              cast_inputs=input_dtype)
            self._units.append((unit_module, unit, flat_param))
            self._hooks.append(hooks)
        # parameters(): the root's flat shard first, then the inner units' in module order.
        order = {id(m): i for i, (_, m) in enumerate(module.named_modules())}
        self._units.sort(key=lambda entry: order[id(entry[0])])
        self._state_dict_settings = StateDictSettings(StateDictType.FULL_STATE_DICT, FullStateDictConfig())
        self._forward_prefetch, self._backward_prefetch = forward_prefetch, backward_prefetch
        self._execution_order = None  # the units' hooks in the order of the first forward

    def _plan_prefetch(self, forward):
        """Run the first ``forward()`` recording the order units gather in, then tell each
        unit which gather to post ahead: every rank records the same order, so the posted
        collectives match."""
        order = []
        for hooks in self._hooks:
            hooks.forward_order = order
        try:
            return forward()
        finally:
            for hooks in self._hooks:
                hooks.forward_order = None
            self._execution_order = order
            for before, after in zip(order, order[1:]):
                if self._forward_prefetch:
                    before.forward_prefetch = [after]
                if not before.unit.requires_grad:
                    continue  # its backward never runs: a gather posted for it would go stale
                if self._backward_prefetch is BackwardPrefetch.BACKWARD_PRE:
                    after.backward_prefetch = [before]
                elif self._backward_prefetch is BackwardPrefetch.BACKWARD_POST:
                    after.unit.after_backward = before.start

    # --- the module protocol --------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        """Run the wrapped module; each unit gathers its parameters around its own forward."""
        mp = self.mixed_precision
        if mp is not None and mp.param_dtype is not None and mp.cast_root_forward_inputs:
            args = map_tensors(args, lambda t: cast(t, mp.param_dtype))
            kwargs = map_tensors(kwargs, lambda t: cast(t, mp.param_dtype))
        if self._execution_order is None:
            return self._plan_prefetch(lambda: self.module(*args, **kwargs))
        return self.module(*args, **kwargs)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """The flat shards, one per unit, under FSDP's names."""
        for unit_module, _, flat in self._units:
            path = next(p for p, m in self.module.named_modules() if m is unit_module)
            name = "_fsdp_wrapped_module." + (f"{path}._fsdp_wrapped_module._flat_param" if path else "_flat_param")
            yield _join(prefix, name), flat

    def parameters(self, recurse=True):
        """The flat shards, one per unit: what the optimizer steps."""
        for _, p in self.named_parameters():
            yield p

    def buffers(self, recurse=True):
        return self.module.buffers(recurse)

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self.module.named_buffers(prefix=prefix, recurse=recurse)

    def children(self):
        yield self.module

    def modules(self):
        yield self
        yield from self.module.modules()

    def train(self, mode=True):
        self.module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    @property
    def training(self):
        return self.module.training

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.detach().zero_()

    def to(self, *args, **kwargs):
        return self

    def __repr__(self):
        return f"FullyShardedDataParallel(\n  (_fsdp_wrapped_module): {self.module!r}\n)"

    # --- gradient synchronisation ---------------------------------------------------------

    @contextlib.contextmanager
    def no_sync(self):
        """Inside, backward keeps full gradients locally; the next synced backward reduces their sum."""
        previous = [unit.sync_gradients for _, unit, _ in self._units]
        for _, unit, _ in self._units:
            unit.sync_gradients = False
        try:
            yield
        finally:
            for (_, unit, _), flag in zip(self._units, previous):
                unit.sync_gradients = flag

    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Scale the sharded gradients so that their global norm is at most ``max_norm``.

        The norm is over every rank's shards (padding holds zero gradient). Returns the
        total norm before clipping.
        """
        norm_type = float(norm_type)
        grads = [p.grad for p in self.parameters() if p.grad is not None]
        dtype = grads[0].dtype if grads else ember_tensor.float32
        local = np.zeros(1, dtype=np.float64)
        for g in grads:
            values = np.abs(g.detach().cpu().numpy().astype(np.float64))
            local[0] = max(local[0], values.max(initial=0.0)) if norm_type == float("inf") else \
                local[0] + (values ** norm_type).sum()
        total = ember_tensor.from_numpy(local)
        all_reduce(total, op=ReduceOp.MAX if norm_type == float("inf") else ReduceOp.SUM, group=self.process_group)
        norm = total.item() if norm_type == float("inf") else total.item() ** (1.0 / norm_type)
        coefficient = max_norm / (norm + 1e-6)
        if coefficient < 1:
            for g in grads:
                g.detach().mul_(coefficient)
        return ember_tensor.tensor(norm, dtype=dtype)

    # --- state dicts ----------------------------------------------------------------------

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None, optim_state_dict_config=None):
        """Within, ``module.state_dict()``, ``load_state_dict`` and ``FSDP.optim_state_dict``
        use ``state_dict_type`` (FULL, SHARDED or LOCAL_STATE_DICT)."""
        config = state_dict_config or {StateDictType.FULL_STATE_DICT: FullStateDictConfig,
                                       StateDictType.SHARDED_STATE_DICT: ShardedStateDictConfig,
                                       StateDictType.LOCAL_STATE_DICT: LocalStateDictConfig}[state_dict_type]()
        previous = module._state_dict_settings
        module._state_dict_settings = StateDictSettings(state_dict_type, config, optim_state_dict_config)
        try:
            yield previous
        finally:
            module._state_dict_settings = previous

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Full tensors (FULL_STATE_DICT) or this rank's chunks (SHARDED_STATE_DICT), under
        the unwrapped model's names."""
        settings = self._state_dict_settings
        if settings.state_dict_type is StateDictType.LOCAL_STATE_DICT:
            return self._local_state_dict(destination, prefix)
        full = settings.state_dict_type is StateDictType.FULL_STATE_DICT
        values = {}
        for _, unit, flat in self._units:
            shard = flat.detach().cpu().numpy()
            arrays = unit.gather_full(unit.segments(shard)) if full else unit.unpack(shard)
            for spec, array in zip(unit.specs, arrays):
                tensor = ember_tensor.from_numpy(np.array(array))
                values[self._qualified[(id(spec.module), spec.name)]] = (
                    tensor if full else ShardedChunk(tensor, spec.shape, unit.rank * spec.chunk))
        if full and settings.state_dict_config.rank0_only and resolve(None).rank() != 0:
            return {}
        buffers = dict(self.module.named_buffers())
        result = {} if destination is None else destination
        for key in self._state_keys:
            result[prefix + key] = values[key] if key in values else buffers[key].detach()
        return result

    def _local_names(self):
        """LOCAL_STATE_DICT's keys: ``<unit path>._flat_param`` (PyTorch's, wrappers' names cleaned)."""
        paths = {id(m): path for path, m in self.module.named_modules()}
        return [(_join(paths[id(m)], "_flat_param"), flat) for m, _, flat in self._units]

    def _local_state_dict(self, destination, prefix):
        """Each unit's flat shard as it is (padded; this rank's), and the buffers."""
        result = {} if destination is None else destination
        for name, flat in self._local_names():
            result[prefix + name] = flat.detach().clone()
        for name, buffer in self.module.named_buffers():
            result[prefix + name] = buffer.detach()
        return result

    def load_state_dict(self, state_dict, strict=True):
        """Load full tensors (or SHARDED_STATE_DICT chunks, or LOCAL_STATE_DICT flat shards
        saved with the same sharding) into the shards and buffers."""
        if self._state_dict_settings.state_dict_type is StateDictType.LOCAL_STATE_DICT:
            keys = [name for name, _ in self._local_names()] + [n for n, _ in self.module.named_buffers()]
            missing = [k for k in keys if k not in state_dict]
            unexpected = [k for k in state_dict if k not in keys]
            if strict and (missing or unexpected):
                raise RuntimeError(f"Error(s) in loading state_dict for FullyShardedDataParallel: missing keys "
                                   f"{missing}, unexpected keys {unexpected}")
            for name, flat in self._local_names():
                value = state_dict[name]
                if tuple(value.shape) != tuple(flat.shape):
                    raise RuntimeError(f"size mismatch for {name}: the local state dict holds {tuple(value.shape)}, "
                                       f"this rank's flat shard is {tuple(flat.shape)} (LOCAL_STATE_DICT loads only "
                                       "into the same sharding)")
                flat.detach().copy_(value)
            for name, buffer in self.module.named_buffers():
                if name in state_dict:
                    buffer.detach().copy_(state_dict[name])
            return missing, unexpected
        missing = [k for k in self._state_keys if k not in state_dict]
        unexpected = [k for k in state_dict if k not in self._state_keys]
        if strict and (missing or unexpected):
            raise RuntimeError(f"Error(s) in loading state_dict for FullyShardedDataParallel: missing keys "
                               f"{missing}, unexpected keys {unexpected}")
        for _, unit, flat in self._units:
            chunks = []
            for spec in unit.specs:
                value = state_dict[self._qualified[(id(spec.module), spec.name)]]
                if isinstance(value, ShardedChunk):
                    chunks.append(value.local.detach().cpu().numpy())
                else:
                    chunks.append(unit.shard_of(spec, value.detach().cpu().numpy()))
            flat.detach().copy_(ember_tensor.from_numpy(unit.pack(chunks, dtype=unit.dtype.np)))
        buffers = dict(self.module.named_buffers())
        for key, buffer in buffers.items():
            if key in state_dict:
                buffer.detach().copy_(state_dict[key])
        return missing, unexpected


    @staticmethod
    def optim_state_dict(model, optim, optim_state_dict=None, group=None):
        """The optimizer's state keyed by parameter name, full or sharded as the model's
        ``state_dict_type`` says (LOCAL_STATE_DICT: the optimizer's own)."""
        return _optim_state.optim_state_dict(model, optim)

    @staticmethod
    def optim_state_dict_to_load(model, optim, optim_state_dict, is_named_optimizer=False, load_directly=False,
                                 group=None):
        """A state dict of ``optim_state_dict`` as ``optim.load_state_dict`` takes it (and
        loaded, with ``load_directly=True``)."""
        result = _optim_state.optim_state_dict_to_load(model, optim, optim_state_dict)
        if load_directly:
            optim.load_state_dict(result)
        return result

    @staticmethod
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False, offload_to_cpu=False,
                           with_grads=False):
        """A context in which the original modules hold their full parameters; with
        ``writeback``, changes made inside go back into the shards on exit.

        >>> # with FSDP.summon_full_params(model):
        >>> #     print(model.module[0].weight.shape)
        """
        return _summon.summon_full_params(module, recurse, writeback, rank0_only, offload_to_cpu, with_grads)


def _join(prefix, name):
    return f"{prefix}.{name}" if prefix else name


def _self_group(world):
    """A group of this rank alone: NO_SHARD's 'shard' group."""
    return ProcessGroup(mpi().COMM_SELF.Dup(), [world.ranks[world.rank()]], world.timeout, world.backend)


def _node_groups(world):
    """(ranks on this node, same local rank across nodes): HYBRID_SHARD's default groups."""
    MPI = mpi()
    me = world.ranks[world.rank()]
    node = guarded(world.comm, "HYBRID_SHARD groups", world.timeout,
                   lambda: world.comm.Split_type(MPI.COMM_TYPE_SHARED, key=world.rank()))
    node_ranks = guarded(node, "HYBRID_SHARD groups", world.timeout, lambda: node.allgather(me))
    across = guarded(world.comm, "HYBRID_SHARD groups", world.timeout,
                     lambda: world.comm.Split(node.Get_rank(), world.rank()))
    across_ranks = guarded(across, "HYBRID_SHARD groups", world.timeout, lambda: across.allgather(me))
    return (ProcessGroup(node, node_ranks, world.timeout, world.backend),
            ProcessGroup(across, across_ranks, world.timeout, world.backend))


def _groups(strategy, process_group, device_mesh):
    """(shard group, replicate group or None) for a sharding strategy."""
    hybrid = strategy in (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2)
    if device_mesh is not None:
        if hybrid:
            if device_mesh.ndim != 2:
                raise ValueError(f"HYBRID_SHARD needs a 2-D device mesh (replicate, shard), got {device_mesh.ndim}-D")
            return device_mesh.get_group(1), device_mesh.get_group(0)
        process_group = device_mesh.get_group()
    if hybrid:
        if isinstance(process_group, tuple):
            return process_group
        return _node_groups(resolve(process_group))
    group = resolve(process_group)
    if strategy is ShardingStrategy.NO_SHARD:
        return _self_group(group), group
    return group, None
