"""FSDP programs the tests run under mpiexec: ``python fsdp_worker.py <scenario> [args]``.

Each trains a small MLP sharded over the ranks, each rank on its part of the global batch,
next to a reference copy trained in one process on the whole batch, and asserts that the
parameters stay equal. It prints ``OK <scenario> <rank>`` and a ``MEMORY`` line (bytes of
parameters + gradients + optimizer state held by this rank).
"""

import copy
import functools
import sys

import numpy as np

import ember as torch
import ember.distributed as dist
import ember.nn as nn
import ember.nn.functional as F
from ember.distributed.device_mesh import init_device_mesh
from ember.distributed.fsdp import (BackwardPrefetch, FullStateDictConfig, FullyShardedDataParallel as FSDP, MixedPrecision,
                                    ShardedChunk, ShardingStrategy, StateDictType, fully_shard, FSDPModule)
from ember.distributed.fsdp.wrap import ModuleWrapPolicy, size_based_auto_wrap_policy


def make_model_of_width(width=7):
    torch.manual_seed(0)
    # odd widths: chunks are uneven and padded on every world size
    return nn.Sequential(nn.Linear(5, width), nn.ReLU(), nn.Linear(width, width + 2), nn.Tanh(),
                         nn.Linear(width + 2, 3)).double()


def data(size):
    g = torch.Generator().manual_seed(1)
    return torch.randn(4 * size, 5, generator=g, dtype=torch.float64), torch.randint(0, 3, (4 * size,), generator=g)


def held_bytes(parameters, optimizer):
    """Bytes of parameters, their gradients and the optimizer's state on this rank."""
    total = 0
    for p in parameters:
        total += p.numel() * p.element_size()
        if p.grad is not None:
            total += p.grad.numel() * p.grad.element_size()
    for state in optimizer.state.values():
        total += sum(v.numel() * v.element_size() for v in state.values() if isinstance(v, torch.Tensor) and v.dim())
    return total


def train(model, reference, optimizer, ref_optimizer, steps=3, clip=None):
    rank, size = dist.get_rank(), dist.get_world_size()
    x, y = data(size)
    mine = slice(4 * rank, 4 * rank + 4)
    for _ in range(steps):
        optimizer.zero_grad()
        F.cross_entropy(model(x[mine]), y[mine]).backward()
        if clip is not None:
            norm = model.clip_grad_norm_(clip)
        optimizer.step()
        ref_optimizer.zero_grad()
        F.cross_entropy(reference(x), y).backward()
        if clip is not None:
            ref_norm = nn.utils.clip_grad_norm_(reference.parameters(), clip)
            np.testing.assert_allclose(norm.item(), ref_norm.item(), rtol=1e-9)
        ref_optimizer.step()


def assert_same(state, reference, rtol=1e-10):
    expected = reference.state_dict()
    assert list(state) == list(expected), (list(state), list(expected))
    for key, value in expected.items():
        np.testing.assert_allclose(state[key].numpy(), value.numpy(), rtol=rtol, atol=1e-12, err_msg=key)


def wrapper(strategy="FULL_SHARD", policy="module", width="7"):
    """FullyShardedDataParallel with an auto-wrap policy equals one process on the whole batch."""
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    make_model = functools.partial(make_model_of_width, int(width))
    reference = make_model()
    model = make_model()
    auto_wrap = (ModuleWrapPolicy({nn.Linear}) if policy == "module" else
                 functools.partial(size_based_auto_wrap_policy, min_num_params=6 * int(width)))
    kwargs = {}
    if strategy == "HYBRID_SHARD" and size == 4:
        kwargs["device_mesh"] = init_device_mesh("cpu", (2, 2), mesh_dim_names=("replicate", "shard"))
    # prefetching posts gathers ahead in each form (4 ranks: after each unit's reduce-scatter)
    fsdp = FSDP(model, sharding_strategy=getattr(ShardingStrategy, strategy), auto_wrap_policy=auto_wrap,
                forward_prefetch=True, backward_prefetch=BackwardPrefetch.BACKWARD_POST if size == 4 else
                BackwardPrefetch.BACKWARD_PRE, **kwargs)
    flat = list(fsdp.parameters())
    assert len(flat) == 3, [p.shape for p in flat]  # the root owns no parameter of its own (module policy)
    optimizer = torch.optim.Adam(fsdp.parameters(), lr=0.05)
    ref_optimizer = torch.optim.Adam(reference.parameters(), lr=0.05)
    train(fsdp, reference, optimizer, ref_optimizer, clip=0.5)
    # FULL_SHARD frees each unit's full parameters after its forward (backward gathers them
    # again: the equal training above depends on it, the freed memory reads as zeros)
    x, y = data(size)
    loss = F.cross_entropy(fsdp(x[:4]), y[:4])
    resident = [unit.resident for _, unit, _ in fsdp._units]
    assert resident == [strategy in ("SHARD_GRAD_OP", "NO_SHARD")] * 3, resident
    if strategy == "FULL_SHARD":
        assert not fsdp._units[0][1].full_views[0].any()
    optimizer.zero_grad()
    loss.backward()
    assert not any(unit.resident for _, unit, _ in fsdp._units)
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT):
        assert_same(fsdp.state_dict(), reference)
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT, FullStateDictConfig(rank0_only=True)):
        assert (fsdp.state_dict() == {}) == (rank != 0)
    # no_sync: accumulate locally, then one synced backward reduces the sum
    x, y = data(size)
    mine = slice(4 * rank, 4 * rank + 4)
    optimizer.zero_grad()
    ref_optimizer.zero_grad()
    with fsdp.no_sync():
        F.cross_entropy(fsdp(x[mine]), y[mine]).backward()
    assert all(p.grad is None for p in fsdp.parameters())
    F.cross_entropy(fsdp(x[mine]), y[mine]).backward()
    optimizer.step()
    (2 * F.cross_entropy(reference(x), y)).backward()
    ref_optimizer.step()
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT):
        assert_same(fsdp.state_dict(), reference)
    # a full state dict loads back into the shards
    fresh = FSDP(make_model(), sharding_strategy=getattr(ShardingStrategy, strategy), auto_wrap_policy=auto_wrap,
                 **kwargs)
    fresh.load_state_dict(reference.state_dict())
    x_all, _ = data(size)
    np.testing.assert_allclose(fresh(x_all).detach().numpy(), reference(x_all).detach().numpy(), rtol=1e-10)
    # a sharded state dict holds this rank's chunks, and loads back into the same sharding
    with FSDP.state_dict_type(fsdp, StateDictType.SHARDED_STATE_DICT):
        sharded = fsdp.state_dict()
    chunk = sharded["2.weight"]
    assert isinstance(chunk, ShardedChunk) and chunk.global_shape == tuple(reference[2].weight.shape)
    rows = chunk.local.shape[0]
    np.testing.assert_allclose(chunk.local.numpy(), reference[2].weight.detach().numpy()[
        chunk.row_offset:chunk.row_offset + rows], rtol=1e-10)
    other = FSDP(make_model(), sharding_strategy=getattr(ShardingStrategy, strategy), auto_wrap_policy=auto_wrap,
                 **kwargs)
    with FSDP.state_dict_type(other, StateDictType.SHARDED_STATE_DICT):
        other.load_state_dict(sharded)
    np.testing.assert_allclose(other(x_all).detach().numpy(), reference(x_all).detach().numpy(), rtol=1e-10)
    print(f"MEMORY {strategy} {size} {rank} {held_bytes(fsdp.parameters(), optimizer)} "
          f"{held_bytes(reference.parameters(), ref_optimizer)}", flush=True)
    print(f"OK wrapper {rank}", flush=True)


def per_parameter(mesh_shape="1", prefetch="explicit"):
    """fully_shard on each Linear and the root (FSDP2), on a 1-D mesh or a 2-D (HSDP) one;
    prefetching as the modules are told (explicit) or FSDP2's default (implicit: in backward,
    the unit whose forward ran before)."""
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    reference = make_model_of_width()
    model = make_model_of_width()
    shape = tuple(int(s) for s in mesh_shape.split("x"))
    mesh = init_device_mesh("cpu", shape if len(shape) == 2 else (size,))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    linears = [layer for layer in model if isinstance(layer, nn.Linear)]
    posted_ahead = []  # is the next Linear's gather in flight while this one computes?
    if prefetch == "explicit":
        for before, after in zip(linears, linears[1:]):  # as FSDP2's docs show
            before.set_modules_to_forward_prefetch([after])
            after.set_modules_to_backward_prefetch([before])
        model[0].register_forward_hook(lambda *_: posted_ahead.append(model[2]._fsdp_unit._pending is not None))
    else:
        # when backward reaches the last Linear's output, its own gather and the middle one's are posted
        # (the FSDP hook on the output, registered first, runs first); the first one's is not yet
        def check(grad):
            posted_ahead.append((linears[1]._fsdp_unit._pending is not None or linears[1]._fsdp_unit.resident,
                                 linears[0]._fsdp_unit._pending is None and not linears[0]._fsdp_unit.resident))
        linears[2].register_forward_hook(lambda module, args, out: (out.register_hook(check), None)[1])
    assert isinstance(model, FSDPModule) and isinstance(model, nn.Sequential)
    assert type(model[0]).__name__ == "FSDPLinear"
    shard_size = mesh.size(mesh.ndim - 1)
    chunk = -(-7 // shard_size)
    assert model[0].weight.shape[0] == max(0, min(chunk, 7 - mesh.get_local_rank(mesh.ndim - 1) * chunk))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    ref_optimizer = torch.optim.Adam(reference.parameters(), lr=0.05)
    train(model, reference, optimizer, ref_optimizer)
    assert posted_ahead == ([True] * 3 if prefetch == "explicit" else [(True, True)] * 3), posted_ahead
    # after backward no unit holds gathered parameters
    assert not any(m._fsdp_unit.resident or m._fsdp_unit._pending for m in linears)
    # the chunks gathered along the shard dimension are the reference's parameters
    group = mesh.get_group(mesh.ndim - 1)
    for (name, shard), (_, expected) in zip(model.named_parameters(), reference.named_parameters()):
        pieces = [None] * group.size()
        dist.all_gather_object(pieces, shard.detach().numpy(), group=group)
        np.testing.assert_allclose(np.concatenate(pieces), expected.detach().numpy(), rtol=1e-10, err_msg=name)
    # gradient accumulation without communication
    optimizer.zero_grad()
    model.set_requires_gradient_sync(False)
    x, y = data(size)
    F.cross_entropy(model(x[4 * rank:4 * rank + 4]), y[4 * rank:4 * rank + 4]).backward()
    assert all(p.grad is None for p in model.parameters())
    model.set_requires_gradient_sync(True)
    print(f"MEMORY fully_shard{mesh_shape} {size} {rank} {held_bytes(model.parameters(), optimizer)} "
          f"{held_bytes(reference.parameters(), ref_optimizer)}", flush=True)
    print(f"OK per_parameter {rank}", flush=True)


def unused_branch():
    """fully_shard's implicit backward prefetching gathers a unit whose output then misses the
    loss (its backward never runs): parameters changed before the next forward are the ones
    that forward computes with, not the prefetched copy."""
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()

    class Branches(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(5, 3), nn.Linear(5, 3)

        def forward(self, x):
            return self.a(x), self.b(x)

    torch.manual_seed(0)
    model = Branches().double()
    reference = copy.deepcopy(model)
    mesh = init_device_mesh("cpu", (size,))
    fully_shard(model.a, mesh=mesh)
    fully_shard(model.b, mesh=mesh)
    fully_shard(model, mesh=mesh)
    x, y = data(size)
    mine = slice(4 * rank, 4 * rank + 4)
    for _ in range(2):
        F.cross_entropy(model(x[mine])[1], y[mine]).backward()  # a's output is left out
        assert model.a._fsdp_unit._pending is not None or model.a._fsdp_unit.resident  # prefetched by b
        with torch.no_grad():
            model.a.weight.mul_(0.5)  # this rank's chunk
            reference.a.weight.mul_(0.5)
        np.testing.assert_allclose(model(x[mine])[0].detach().numpy(), reference(x[mine])[0].detach().numpy(),
                                   rtol=1e-10)
    print(f"OK unused_branch {rank}", flush=True)


def mixed_precision():
    """bfloat16 compute, float32 shards: gradients reach the float32 shards; loss close."""
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    reference = copy.deepcopy(model)
    fsdp = FSDP(model, mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32),
                auto_wrap_policy=ModuleWrapPolicy({nn.Linear}))
    x, y = data(size)
    x = x.float()
    out = fsdp(x[4 * rank:4 * rank + 4])
    assert out.dtype == torch.bfloat16, out.dtype
    F.cross_entropy(out.float(), y[4 * rank:4 * rank + 4]).backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in fsdp.parameters())
    F.cross_entropy(reference(x), y).backward()
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT):
        assert fsdp.state_dict()["0.weight"].dtype == torch.float32
    print(f"OK mixed_precision {rank}", flush=True)


def checkpoint_save(directory):
    """fully_shard training, then a sharded checkpoint: each rank writes its own chunks."""
    import ember.distributed.checkpoint as dcp
    from ember.distributed.checkpoint.state_dict import get_model_state_dict

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    reference, model = make_model_of_width(), make_model_of_width()
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    train(model, reference, torch.optim.SGD(model.parameters(), lr=0.1),
          torch.optim.SGD(reference.parameters(), lr=0.1), steps=2)
    dcp.save({"model": get_model_state_dict(model), "step": 2}, checkpoint_id=directory)
    if rank == 0:
        torch.save(reference.state_dict(), f"{directory}/../reference.pt")
    print(f"OK checkpoint_save {rank}", flush=True)


def checkpoint_load(directory):
    """A checkpoint saved on another number of ranks loads into fully_shard's chunks (or,
    on one rank, into a plain model's full tensors)."""
    import ember.distributed.checkpoint as dcp
    from ember.distributed.checkpoint.state_dict import get_model_state_dict, set_model_state_dict

    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    expected = torch.load(f"{directory}/../reference.pt")
    torch.manual_seed(123)
    model = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 9), nn.Tanh(), nn.Linear(9, 3)).double()
    if size > 1:
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer)
        fully_shard(model)
        state = {"model": get_model_state_dict(model), "step": 0}
        dcp.load(state, checkpoint_id=directory)
        set_model_state_dict(model, state["model"])
        for name, shard in model.named_parameters():
            rows = slice(shard._fsdp_row_offset, shard._fsdp_row_offset + shard.shape[0])
            # The reference trained on the whole batch in one process: equal to the sharded
            # training up to rounding (its gradients sum the batch in another order), as in
            # `assert_same`; a misplaced chunk or row would be off by far more.
            np.testing.assert_allclose(shard.detach().numpy(), expected[name].numpy()[rows], rtol=1e-10,
                                       atol=1e-12, err_msg=name)
    else:
        state = {"model": model.state_dict(), "step": 0}
        dcp.load(state, checkpoint_id=directory)
        model.load_state_dict(state["model"])
        for name, value in model.state_dict().items():
            np.testing.assert_allclose(value.numpy(), expected[name].numpy(), rtol=1e-10, atol=1e-12, err_msg=name)
    assert state["step"] == 2
    print(f"OK checkpoint_load {rank}", flush=True)


def _steps(model, optimizer, x, y, steps):
    """``steps`` Adam steps of this rank's equal share of the global batch (x, y)."""
    rank, size = dist.get_rank(), dist.get_world_size()
    share = x.shape[0] // size
    for _ in range(steps):
        optimizer.zero_grad()
        F.cross_entropy(model(x[share * rank:share * (rank + 1)]), y[share * rank:share * (rank + 1)]).backward()
        optimizer.step()


def _sharded_model():
    model = make_model_of_width()
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    return model


def optim_save(directory):
    """fully_shard + Adam trained on 4 ranks, saved with its optimizer state (get_state_dict);
    rank 0 also writes what one process reaches after 2 more steps."""
    import ember.distributed.checkpoint as dcp
    from ember.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict, get_state_dict

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    x, y = data(4)
    model, reference = _sharded_model(), make_model_of_width()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    ref_optimizer = torch.optim.Adam(reference.parameters(), lr=0.05)
    _steps(model, optimizer, x, y, 2)
    for _ in range(2):
        ref_optimizer.zero_grad()
        F.cross_entropy(reference(x), y).backward()
        ref_optimizer.step()
    # the full optimizer state (all-gathered) is the one-process optimizer's, by name
    full = get_optimizer_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True))
    names = [name for name, _ in reference.named_parameters()]
    expected = ref_optimizer.state_dict()
    assert [g["params"] for g in full["param_groups"]] == [names]
    for index, name in enumerate(names):
        for key, value in expected["state"][index].items():
            np.testing.assert_allclose(full["state"][name][key].numpy(), value.numpy(), rtol=1e-10, atol=1e-14,
                                       err_msg=f"{name} {key}")
    offloaded = get_optimizer_state_dict(model, optimizer, options=StateDictOptions(full_state_dict=True,
                                                                                    cpu_offload=True))
    assert (offloaded == {}) == (rank != 0)  # PyTorch: full + cpu_offload keeps it on rank 0 only
    model_sd, optim_sd = get_state_dict(model, optimizer)
    assert isinstance(optim_sd["state"]["0.weight"]["exp_avg"], ShardedChunk)
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=directory)
    if rank == 0:
        for _ in range(2):
            ref_optimizer.zero_grad()
            F.cross_entropy(reference(x), y).backward()
            ref_optimizer.step()
        torch.save(reference.state_dict(), f"{directory}/../resumed.pt")
    print(f"OK optim_save {rank}", flush=True)


def optim_load(directory):
    """The 4-rank checkpoint (model + Adam state) loads onto 2 ranks of fully_shard, or into
    one unsharded process, and 2 more steps there equal 4 steps of one process."""
    import ember.distributed.checkpoint as dcp
    from ember.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(7)
    model = _sharded_model() if size > 1 else make_model_of_width()
    for p in model.parameters():  # start far from the checkpoint: loading must overwrite everything
        p.detach().normal_()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.3, betas=(0.5, 0.6))
    model_sd, optim_sd = get_state_dict(model, optimizer)  # creates the fresh optimizer's state
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=directory)
    set_state_dict(model, optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])
    group = optimizer.param_groups[0]
    assert group["lr"] == 0.05 and group["betas"] == (0.9, 0.999), group  # hyper-parameters come back too
    x, y = data(4)
    _steps(model, optimizer, x, y, 2)
    expected = torch.load(f"{directory}/../resumed.pt")
    for name, p in model.named_parameters():
        value = p.detach().numpy()
        rows = slice(getattr(p, "_fsdp_row_offset", 0), getattr(p, "_fsdp_row_offset", 0) + value.shape[0])
        np.testing.assert_allclose(value, expected[name].numpy()[rows], rtol=1e-9, atol=1e-12, err_msg=name)
    print(f"OK optim_load {rank}", flush=True)


def wrapper_state():
    """The wrapper API's optimizer state dicts (full, sharded, local), LOCAL_STATE_DICT and
    summon_full_params, against one process."""
    from ember.distributed.fsdp import FullOptimStateDictConfig

    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    policy = ModuleWrapPolicy({nn.Linear})
    reference, fsdp = make_model_of_width(), FSDP(make_model_of_width(), auto_wrap_policy=policy)
    optimizer = torch.optim.Adam(fsdp.parameters(), lr=0.05)
    ref_optimizer = torch.optim.Adam(reference.parameters(), lr=0.05)
    train(fsdp, reference, optimizer, ref_optimizer, steps=2)
    names = [name for name, _ in reference.named_parameters()]
    expected = ref_optimizer.state_dict()["state"]
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT):
        full = FSDP.optim_state_dict(fsdp, optimizer)
        model_full = fsdp.state_dict()
    assert [g["params"] for g in full["param_groups"]] == [names]
    for index, name in enumerate(names):
        for key, value in expected[index].items():
            np.testing.assert_allclose(full["state"][name][key].numpy(), value.numpy(), rtol=1e-10, atol=1e-14)
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT,
                              optim_state_dict_config=FullOptimStateDictConfig(rank0_only=True)):
        assert (FSDP.optim_state_dict(fsdp, optimizer) == {}) == (rank != 0)
    with FSDP.state_dict_type(fsdp, StateDictType.SHARDED_STATE_DICT):
        sharded = FSDP.optim_state_dict(fsdp, optimizer)
    chunk = sharded["state"]["2.weight"]["exp_avg_sq"]
    np.testing.assert_allclose(chunk.local.numpy(), expected[2]["exp_avg_sq"].numpy()[
        chunk.row_offset:chunk.row_offset + chunk.local.shape[0]], rtol=1e-10, atol=1e-14)
    # a fresh model and optimizer take the full state (and the sharded one) and train on equally
    for saved, kind in ((full, StateDictType.FULL_STATE_DICT), (sharded, StateDictType.SHARDED_STATE_DICT)):
        other = FSDP(make_model_of_width(), auto_wrap_policy=policy)
        other_optimizer = torch.optim.Adam(other.parameters(), lr=0.5)
        with FSDP.state_dict_type(other, kind):
            other.load_state_dict(model_full if kind is StateDictType.FULL_STATE_DICT else fsdp.state_dict())
            FSDP.optim_state_dict_to_load(other, other_optimizer, saved, load_directly=True)
        assert other_optimizer.param_groups[0]["lr"] == 0.05
        x, y = data(size)
        other_optimizer.zero_grad()
        F.cross_entropy(other(x[4 * rank:4 * rank + 4]), y[4 * rank:4 * rank + 4]).backward()
        other_optimizer.step()
        with FSDP.state_dict_type(other, StateDictType.FULL_STATE_DICT):
            stepped = other.state_dict()
        one = copy.deepcopy(reference)
        one_optimizer = torch.optim.Adam(one.parameters(), lr=0.05)
        one_optimizer.load_state_dict(ref_optimizer.state_dict())
        one_optimizer.zero_grad()
        F.cross_entropy(one(x), y).backward()
        one_optimizer.step()
        assert_same(stepped, one)
    # LOCAL_STATE_DICT: each unit's flat shard, loading into the same sharding
    with FSDP.state_dict_type(fsdp, StateDictType.LOCAL_STATE_DICT):
        local = fsdp.state_dict()
    assert sorted(local) == ["0._flat_param", "2._flat_param", "4._flat_param"], sorted(local)
    twin = FSDP(make_model_of_width(), auto_wrap_policy=policy)
    with FSDP.state_dict_type(twin, StateDictType.LOCAL_STATE_DICT):
        twin.load_state_dict(local)
    x, _ = data(size)
    np.testing.assert_allclose(twin(x).detach().numpy(), reference(x).detach().numpy(), rtol=1e-10)
    # summon_full_params: the full parameters on the modules; writeback keeps changes made inside
    with FSDP.summon_full_params(fsdp):
        np.testing.assert_allclose(fsdp.module[2].weight.detach().numpy(), reference[2].weight.detach().numpy(),
                                   rtol=1e-10)
        with torch.no_grad():
            fsdp.module[2].weight.mul_(2.0)
    with FSDP.summon_full_params(fsdp, writeback=False):
        with torch.no_grad():
            fsdp.module[2].weight.zero_()
    assert "weight" not in vars(fsdp.module[2])
    with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT):
        doubled = fsdp.state_dict()["2.weight"].numpy()
    np.testing.assert_allclose(doubled, 2 * reference[2].weight.detach().numpy(), rtol=1e-10)
    print(f"OK wrapper_state {rank}", flush=True)


if __name__ == "__main__":
    scenario, *arguments = sys.argv[1:]
    globals()[scenario](*arguments)
