"""Programs the tests run under mpiexec: ``python mpi_worker.py <scenario> [args]``.

Each scenario checks its results with plain asserts (a failure exits non-zero with a
traceback, which the test shows) and prints ``OK <scenario> <rank>`` at the end.
"""

import datetime
import os
import sys
import time

import numpy as np

import ember_autograd
import ember_tensor as et
import ember_distributed as dist

DTYPES = [et.float32, et.float64, et.float16, et.bfloat16, et.int64, et.int32, et.int16, et.int8, et.uint8,
          et.bool]


def values(dtype, rank, shape=(2, 3)):
    """A rank-dependent tensor of ``dtype`` and its NumPy twin."""
    base = (np.arange(np.prod(shape)).reshape(shape) % 5 + rank + 1)
    if dtype is et.bool:
        base = (base + rank) % 2 == 0
    array = base.astype(dtype.np)
    return et.from_numpy(array.copy()), array


def numpy_reduce(arrays, op):
    if arrays[0].dtype == np.bool_:
        combine = {"sum": np.logical_or, "max": np.logical_or, "bor": np.logical_or, "product": np.logical_and,
                   "min": np.logical_and, "band": np.logical_and, "bxor": np.logical_xor}[op]
    else:
        combine = {"sum": np.add, "avg": np.add, "product": np.multiply, "min": np.minimum, "max": np.maximum,
                   "band": np.bitwise_and, "bor": np.bitwise_or, "bxor": np.bitwise_xor}[op]
    wide = [a.astype(np.float32) if a.dtype.itemsize == 2 and a.dtype.kind == "f" or str(a.dtype) == "bfloat16"
            else a for a in arrays]
    result = wide[0]
    for a in wide[1:]:
        result = combine(result, a)
    if op == "avg":
        result = result / len(arrays)
    return result.astype(arrays[0].dtype)


def check_equal(tensor, expected):
    got = tensor.numpy()
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(got.astype(np.float64), expected.astype(np.float64))


def collectives():
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and dist.get_backend() == "mpi"
    assert dist.get_backend(dist.new_group(backend="nccl")) == "nccl"
    for dtype in DTYPES:
        everyone = [values(dtype, r)[1] for r in range(size)]
        ops = ["sum", "product", "min", "max"] + (["band", "bor", "bxor"] if not dtype.is_floating_point else
                                                 ["avg"])
        for op in ops:
            tensor, _ = values(dtype, rank)
            dist.all_reduce(tensor, op=getattr(dist.ReduceOp, op.upper()))
            check_equal(tensor, numpy_reduce(everyone, op))
        # a non-contiguous tensor is reduced through a staging copy and written back
        tensor, _ = values(dtype, rank, (3, 2))
        view = tensor.t()
        dist.all_reduce(view, op=dist.ReduceOp.MAX)
        check_equal(view, numpy_reduce([values(dtype, r, (3, 2))[1].T for r in range(size)], "max"))
        # reduce: only dst gets the result
        tensor, mine = values(dtype, rank)
        dist.reduce(tensor, dst=size - 1)
        check_equal(tensor, numpy_reduce(everyone, "sum") if rank == size - 1 else mine)
        # broadcast
        tensor, _ = values(dtype, rank)
        dist.broadcast(tensor, src=1)
        check_equal(tensor, everyone[1])
        # all_gather and all_gather_into_tensor
        outputs = [et.zeros(2, 3, dtype=dtype) for _ in range(size)]
        dist.all_gather(outputs, values(dtype, rank)[0])
        for out, expected in zip(outputs, everyone):
            check_equal(out, expected)
        flat = et.zeros(size * 2, 3, dtype=dtype)
        dist.all_gather_into_tensor(flat, values(dtype, rank)[0])
        check_equal(flat, np.concatenate(everyone))
        single = et.zeros(size * 2, 3, dtype=dtype)
        dist.all_gather_single(single, values(dtype, rank)[0])  # PyTorch 2.13's name for it
        check_equal(single, np.concatenate(everyone))
        # gather / scatter
        gathered = [et.zeros(2, 3, dtype=dtype) for _ in range(size)] if rank == 0 else None
        dist.gather(values(dtype, rank)[0], gathered, dst=0)
        if rank == 0:
            for out, expected in zip(gathered, everyone):
                check_equal(out, expected)
        received = et.zeros(2, 3, dtype=dtype)
        dist.scatter(received, [values(dtype, r + 10)[0] for r in range(size)] if rank == 0 else None, src=0)
        check_equal(received, values(dtype, rank + 10)[1])
        # reduce_scatter / reduce_scatter_tensor: rank i gets block i reduced over ranks
        inputs = [values(dtype, rank * size + i)[0] for i in range(size)]
        out = et.zeros(2, 3, dtype=dtype)
        dist.reduce_scatter(out, inputs)
        check_equal(out, numpy_reduce([values(dtype, r * size + rank)[1] for r in range(size)], "sum"))
        out2 = et.zeros(2, 3, dtype=dtype)
        dist.reduce_scatter_tensor(out2, et.cat(inputs))
        check_equal(out2, out.numpy())
        out3 = et.zeros(2, 3, dtype=dtype)
        dist.reduce_scatter_single(out3, et.cat(inputs))
        check_equal(out3, out.numpy())
        # all_to_all: rank i sends block j to rank j
        sends = [values(dtype, 100 * rank + j)[0] for j in range(size)]
        receives = [et.zeros(2, 3, dtype=dtype) for _ in range(size)]
        dist.all_to_all(receives, sends)
        for j, got in enumerate(receives):
            check_equal(got, values(dtype, 100 * j + rank)[1])
    # async collectives return Work handles
    tensor = et.ones(4) * (rank + 1)
    work = dist.all_reduce(tensor, async_op=True)
    assert work.wait() is True and work.is_completed() and work.is_success()
    check_equal(tensor, np.full(4, sum(range(1, size + 1)), np.float32))
    # p2p, sync and async, and recv from any source
    if rank == 0:
        for peer in range(1, size):
            x = et.Tensor(10)
            sender = dist.recv(x)
            check_equal(x, np.full(10, sender, np.float32))
        dist.send(et.arange(5), dst=1, tag=7)
    else:
        dist.send(et.full((10,), float(rank)), dst=0)
        if rank == 1:
            y = et.zeros(5, dtype=et.int64)
            work = dist.irecv(y, src=0, tag=7)
            assert work.result() == 0
            check_equal(y, np.arange(5))
    # a receive into a buffer of the wrong size is an error, not silent truncation
    if size >= 2 and rank < 2:
        if rank == 0:
            dist.send(et.ones(3), dst=1)
        else:
            try:
                dist.recv(et.zeros(5), src=0)
            except RuntimeError as error:
                assert "received 12 bytes into a tensor of 20 bytes" in str(error), error
            else:
                raise AssertionError("short message accepted")
    # objects
    objects = [None] * size
    dist.all_gather_object(objects, {"rank": rank, "name": f"p{rank}"})
    assert objects == [{"rank": r, "name": f"p{r}"} for r in range(size)]
    box = [f"from {rank}", rank] if rank == 0 else [None, None]
    dist.broadcast_object_list(box, src=0)
    assert box == ["from 0", 0]
    # groups: the even ranks
    evens = dist.new_group([r for r in range(size) if r % 2 == 0])
    if rank % 2 == 0:
        x = et.tensor([float(rank)])
        dist.all_reduce(x, group=evens)
        check_equal(x, np.array([sum(range(0, size, 2))], np.float32))
        assert dist.get_world_size(evens) == len(range(0, size, 2))
        assert dist.get_rank(evens) == rank // 2
    else:
        assert evens is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(evens) == -1
    # mismatched calls raise on every rank, naming the ranks
    try:
        dist.all_reduce(et.ones(3 + rank))
    except RuntimeError as error:
        assert "called mismatched collectives (different number of elements)" in str(error), error
        assert "rank 0: all_reduce of 3 elements; rank 1: all_reduce of 4 elements" in str(error), error
    else:
        raise AssertionError("mismatched all_reduce was not detected")
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"OK collectives {rank}", flush=True)


def sharding_collectives():
    """What sharding needs: async reduce_scatter/all_gather_into_tensor, all_to_all_single with
    split sizes, batched p2p in a ring, subgroups, monitored_barrier and DeviceMesh."""
    from ember_distributed.device_mesh import DeviceMesh, init_device_mesh

    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    # async_op=True returns a Work; the output is only written once it is waited for
    for dtype in (et.float32, et.bfloat16, et.int64):
        everyone = [values(dtype, r, (size, 3))[1] for r in range(size)]
        out = et.zeros(1, 3, dtype=dtype)
        work = dist.reduce_scatter_tensor(out, values(dtype, rank, (size, 3))[0], async_op=True)
        assert isinstance(work, dist.Work) and work.wait()
        check_equal(out, numpy_reduce(everyone, "sum")[rank:rank + 1])
        gathered = et.zeros(size, 2, 3, dtype=dtype)
        work = dist.all_gather_into_tensor(gathered, values(dtype, rank)[0], async_op=True)
        work.wait()
        check_equal(gathered, np.stack([values(dtype, r)[1] for r in range(size)]))
    avg = et.zeros(2)
    dist.reduce_scatter_tensor(avg, et.arange(2 * size, dtype=et.float32) * (rank + 1), op=dist.ReduceOp.AVG)
    check_equal(avg, (np.arange(2 * size, dtype=np.float32) * (size + 1) / 2)[2 * rank:2 * rank + 2])
    try:
        dist.reduce_scatter_tensor(et.zeros(3), et.zeros(3 * size + 1))
    except ValueError as error:
        assert "input tensor must have world size" in str(error), error
    else:
        raise AssertionError("reduce_scatter_tensor accepted a wrong input size")
    # all_to_all_single with split sizes: rank i sends (j + 1) rows to rank j
    in_splits = [j + 1 for j in range(size)]
    out_splits = [rank + 1] * size
    source = et.cat([et.full((j + 1, 2), float(100 * rank + j)) for j in range(size)])
    received = et.zeros(sum(out_splits), 2)
    work = dist.all_to_all_single(received, source, out_splits, in_splits, async_op=True)
    work.wait()
    check_equal(received, np.concatenate([np.full((rank + 1, 2), 100 * i + rank, np.float32) for i in range(size)]))
    equal = et.zeros(size)
    dist.all_to_all_single(equal, et.arange(size, dtype=et.float32) + 10 * rank)
    check_equal(equal, np.array([10 * i + rank for i in range(size)], np.float32))
    # a ring through batch_isend_irecv: posting both before waiting cannot deadlock
    right, left = (rank + 1) % size, (rank - 1) % size
    incoming = et.zeros(3, dtype=et.int64)
    ops = [dist.P2POp(dist.irecv, incoming, left), dist.P2POp(dist.isend, et.full((3,), rank, dtype=et.int64), right)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    check_equal(incoming, np.full(3, left, np.int64))
    assert "P2POp(isend" in repr(ops[1])
    for bad, message in [(lambda: dist.P2POp(dist.send, incoming, right), "Invalid ``op``"),
                         (lambda: dist.batch_isend_irecv([1]), "Invalid ``p2p_op_list``"),
                         (lambda: dist.isend(incoming, rank), "should not be the same as the rank")]:
        try:
            bad()
        except ValueError as error:
            assert message in str(error), error
        else:
            raise AssertionError(message)
    # new_subgroups: consecutive groups of 2
    cur, subgroups = dist.new_subgroups(2)
    assert len(subgroups) == size // 2 and subgroups[rank // 2] is cur
    assert dist.get_process_group_ranks(cur) == [rank - rank % 2, rank - rank % 2 + 1]
    x = et.tensor([float(rank)])
    dist.all_reduce(x, group=cur)
    assert x.item() == 2 * (rank - rank % 2) + 1
    for bad, message in [(0, "must be positive"), (size + 1, "must not exceed the world size"),
                         (3, "must be divisible")] if size == 4 else [(0, "must be positive")]:
        try:
            dist.new_subgroups(bad)
        except ValueError as error:
            assert message in str(error), error
        else:
            raise AssertionError(message)
    # monitored_barrier: passes when all come; when one is late, rank 0 names it and the
    # others, never released, raise too
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=10))
    if rank == size - 1:
        time.sleep(1.0)
    try:
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=0.3), wait_all_ranks=True)
    except RuntimeError as error:
        if rank == 0:
            assert str(error) == f"[Rank 0]: Ranks {size - 1} failed to pass monitoredBarrier in 300 ms", error
        else:
            assert f"[Rank {rank}]: monitored_barrier waiting for rank 0 timed out" in str(error), error
    else:
        raise AssertionError(f"rank {rank} passed a monitored_barrier that rank {size - 1} missed")
    # DeviceMesh: 1-D and 2-D
    mesh1 = init_device_mesh("cpu", (size,))
    assert mesh1.size() == size and mesh1.get_local_rank() == rank and mesh1.ndim == 1
    assert dist.get_process_group_ranks(mesh1.get_group()) == list(range(size))
    assert repr(mesh1) == f"DeviceMesh(({size},), 'cpu', stride=(1,))"
    if size == 4:
        mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
        assert mesh.shape == (2, 2) and mesh.mesh_dim_names == ("dp", "tp")
        assert repr(mesh) == "DeviceMesh((dp=2, tp=2), 'cpu', stride=(2, 1))"
        assert mesh.get_coordinate() == (rank // 2, rank % 2)
        assert mesh.get_local_rank("dp") == rank // 2 and mesh.get_local_rank(1) == rank % 2
        assert dist.get_process_group_ranks(mesh.get_group("tp")) == [rank - rank % 2, rank - rank % 2 + 1]
        assert dist.get_process_group_ranks(mesh["dp"].get_group()) == [rank % 2, rank % 2 + 2]
        assert mesh["dp"].mesh.tolist() == [rank % 2, rank % 2 + 2] and mesh["dp"].mesh_dim_names == ("dp",)
        y = et.tensor([float(rank)])
        dist.all_reduce(y, group=mesh["dp"].get_group())
        assert y.item() == 2 * (rank % 2) + 2
        for bad, error_type in [(lambda: mesh.get_group(), RuntimeError), (lambda: mesh["pp"], KeyError),
                                (lambda: mesh[("tp", "dp")], KeyError)]:
            try:
                bad()
            except error_type:
                pass
            else:
                raise AssertionError("bad mesh use accepted")
        explicit = DeviceMesh("cpu", [[0, 2], [1, 3]], mesh_dim_names=("a", "b"))
        assert dist.get_process_group_ranks(explicit.get_group("b")) == [rank % 2, rank % 2 + 2]
        assert dist.get_process_group_ranks(explicit.get_group("a")) == [rank - rank % 2, rank - rank % 2 + 1]
    try:
        init_device_mesh("cpu", (size, 2))
    except RuntimeError as error:
        assert "Mesh should not be bigger than default world size" in str(error), error
    else:
        raise AssertionError("a mesh bigger than the world was accepted")
    print(f"OK sharding_collectives {rank}", flush=True)


def absent_peer():
    """Rank 1 never calls all_reduce: rank 0 must raise within the timeout."""
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=1.5))
    rank = dist.get_rank()
    if rank == 0:
        start = time.monotonic()
        try:
            dist.all_reduce(et.ones(3))
        except dist.DistributedTimeoutError as error:
            elapsed = time.monotonic() - start
            assert "all_reduce on ranks [0, 1] timed out after 1.5 s" in str(error), error
            assert elapsed < 5, elapsed
            report(f"OK absent_peer {rank}")
            os._exit(0)  # the group is unusable now; skip MPI's finalize
    else:
        time.sleep(4)
        os._exit(0)


def report(line):
    """Write the result to $EMBER_TEST_REPORT (and stderr): mpiexec may stop forwarding a
    process's output once a peer has died."""
    path = os.environ.get("EMBER_TEST_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def dead_peer():
    """Rank 1 is killed (SIGKILL) before an all_reduce: rank 0 must raise, not hang."""
    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=3))
    rank = dist.get_rank()
    dist.barrier()
    if rank == 1:
        os.kill(os.getpid(), 9)
    try:
        dist.all_reduce(et.ones(3))
    except RuntimeError as error:
        assert "all_reduce on ranks [0, 1]" in str(error), error
        report(f"OK dead_peer {rank}: {type(error).__name__}")
        os._exit(1)  # a survivor of a failed job fails too
    raise AssertionError("all_reduce with a dead peer returned")


def _cpu_seconds():
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def no_show(token):
    """The last rank never calls init_process_group: the others raise DistBackendError naming
    it within the timeout, sleeping (not spinning) while they wait."""
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if rank == size - 1:
        time.sleep(120)  # stopped by the launcher after the others fail
        return
    cpu, start = _cpu_seconds(), time.monotonic()
    try:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
    except dist.DistBackendError as error:
        elapsed, spent = time.monotonic() - start, _cpu_seconds() - cpu
        assert f"rank(s) [{size - 1}] of {size} never joined" in str(error), error
        assert 2.9 < elapsed < 6, elapsed
        assert spent < 0.5 * elapsed, (spent, elapsed)  # waited in a socket read, not a loop
        report(f"OK no_show {rank}: {type(error).__name__} after {elapsed:.1f} s, cpu {spent:.2f} s")
        raise
    raise AssertionError("init_process_group returned without the last rank")


def killed_peer(token):
    """Rank 1 is SIGKILLed: every survivor raises DistBackendError naming it at its next
    collective, within seconds, though the group's timeout is 60 s."""
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
    rank = dist.get_rank()
    dist.barrier()
    if rank == 1:
        os.kill(os.getpid(), 9)
    start = time.monotonic()
    try:
        for _ in range(3):
            dist.all_reduce(et.ones(3))
            time.sleep(0.5)
    except dist.DistBackendError as error:
        elapsed = time.monotonic() - start
        assert "rank 1 exited or died" in str(error), error
        assert elapsed < 5, elapsed
        report(f"OK killed_peer {rank}: {type(error).__name__} after {elapsed:.2f} s")
        if rank == 0:
            # Rank 0 hosts the job's store: leaving at once would let a slower survivor
            # see the store's loss first and name rank 0 instead of rank 1.
            _wait_for_reports("OK killed_peer", dist.get_world_size() - 1, seconds=10)
        raise
    raise AssertionError("all_reduce with a dead peer returned")


def _wait_for_reports(prefix, count, seconds):
    """Wait (at most `seconds`) until the report file holds `count` lines starting with
    `prefix`."""
    path = os.environ.get("EMBER_TEST_REPORT")
    deadline = time.monotonic() + seconds
    while path and time.monotonic() < deadline:
        with open(path) as f:
            if sum(line.startswith(prefix) for line in f) >= count:
                return
        time.sleep(0.05)


def straggler(token):
    """Rank 1 comes to the all_reduce 5 s late with a 2 s timeout: rank 0 raises the timeout
    error; rank 1, arriving after rank 0 has gone, raises too instead of waiting."""
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=2))
    rank = dist.get_rank()
    dist.barrier()
    if rank == 1:
        time.sleep(5)
    start = time.monotonic()
    try:
        dist.all_reduce(et.ones(3))
    except dist.DistBackendError as error:
        elapsed = time.monotonic() - start
        if rank == 0:
            assert isinstance(error, dist.DistributedTimeoutError) and "timed out after 2 s" in str(error), error
        assert elapsed < 4, elapsed
        report(f"OK straggler {rank}: {type(error).__name__} after {elapsed:.1f} s")
        raise
    raise AssertionError("all_reduce with a straggler returned")


def torchrun_env(*token):
    """Under the launcher (one node or several): torchrun's variables agree with the group."""
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    rank, size = dist.get_rank(), dist.get_world_size()
    env = {name: os.environ[name] for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                               "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
                                               "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_RUN_ID")}
    assert int(env["RANK"]) == rank and int(env["WORLD_SIZE"]) == size, env
    assert int(env["GROUP_RANK"]) * int(env["LOCAL_WORLD_SIZE"]) + int(env["LOCAL_RANK"]) == rank, env
    x = et.tensor([float(rank + 1)])
    dist.all_reduce(x)
    assert x.item() == size * (size + 1) / 2, x
    print(f"OK torchrun_env {rank}/{size} group {env['GROUP_RANK']} restart {env['TORCHELASTIC_RESTART_COUNT']}",
          flush=True)


def fail_once(marker):
    """Rank 1 fails on the first attempt only (a file marks it): --max-restarts runs it again."""
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    if dist.get_rank() == 1 and not os.path.exists(marker):
        open(marker, "w").close()
        raise SystemExit(7)
    dist.barrier()
    print(f"OK fail_once {dist.get_rank()} restart {os.environ['TORCHELASTIC_RESTART_COUNT']}", flush=True)


def rendezvous(init_method, rank, world_size):
    dist.init_process_group("mpi", init_method=init_method, rank=int(rank), world_size=int(world_size),
                            timeout=datetime.timedelta(seconds=30))
    assert dist.get_rank() == int(rank) and dist.get_world_size() == int(world_size)
    x = et.tensor([float(dist.get_rank() + 1)])
    dist.all_reduce(x)
    n = int(world_size)
    assert x.item() == n * (n + 1) / 2, x
    print(f"OK rendezvous {rank}", flush=True)


def launched():
    """Under the launcher: PyTorch's environment variables are set and agree with MPI."""
    dist.init_process_group("gloo")  # PyTorch code names gloo; it runs on MPI
    assert dist.get_backend() == "gloo"  # and sees the name it asked for
    assert dist.get_backend(dist.new_group()) == "gloo"  # a new group inherits it
    rank = dist.get_rank()
    assert int(os.environ["RANK"]) == rank and int(os.environ["LOCAL_RANK"]) == rank
    assert int(os.environ["WORLD_SIZE"]) == dist.get_world_size()
    assert os.environ["MASTER_ADDR"] and os.environ["MASTER_PORT"]
    print(f"threads {os.environ.get('OMP_NUM_THREADS')} {et.get_num_threads()}", flush=True)
    print('Hello from process {} (out of {})!'.format(dist.get_rank(), dist.get_world_size()), flush=True)


class TinyNet:
    """A two-layer perceptron with PyTorch's module protocol, and no ember-nn (not a dependency here)."""

    def __init__(self, seed):
        et.manual_seed(seed)
        self.w1 = (et.randn(4, 8, dtype=et.float64) * 0.5).requires_grad_()
        self.b1 = et.zeros(8, dtype=et.float64, requires_grad=True)
        self.w2 = (et.randn(8, 1, dtype=et.float64) * 0.5).requires_grad_()
        self.unused = et.zeros(3, dtype=et.float64, requires_grad=True)
        self.steps = et.zeros(1, dtype=et.float64)  # a buffer
        self.training = True

    def parameters(self, recurse=True):
        return iter([self.w1, self.b1, self.w2, self.unused])

    def named_parameters(self, prefix="", recurse=True):
        for name in ("w1", "b1", "w2", "unused"):
            yield (f"{prefix}.{name}" if prefix else name), getattr(self, name)

    def buffers(self, recurse=True):
        return iter([self.steps])

    def named_buffers(self, prefix="", recurse=True):
        yield (f"{prefix}.steps" if prefix else "steps"), self.steps

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        return {prefix + name: t for name, t in [*self.named_parameters(), *self.named_buffers()]}

    def train(self, mode=True):
        self.training = mode
        return self

    def __call__(self, x):
        return ((x @ self.w1 + self.b1).relu()) @ self.w2


def _sgd_step(params, lr=0.1):
    with ember_autograd.no_grad():
        for p in params:
            if p.grad is not None:
                p.sub_(lr * p.grad)
                p.grad = None


def ddp():
    """DDP on half batches gives the parameters of one process on the whole batch."""
    dist.init_process_group("mpi")
    rank, size = dist.get_rank(), dist.get_world_size()
    et.manual_seed(0)
    data, target = et.randn(8 * size, 4, dtype=et.float64), et.randn(8 * size, 1, dtype=et.float64)
    reference = TinyNet(seed=0)          # one process, whole batch
    replica = TinyNet(seed=100 + rank)   # different start: DDP broadcasts rank 0's
    model = dist.DistributedDataParallel(replica, bucket_cap_mb=0.0001, find_unused_parameters=True)
    for name, tensor in replica.state_dict().items():
        np.testing.assert_array_equal(tensor.detach().numpy(), TinyNet(seed=100).state_dict()[name].detach().numpy())
    with ember_autograd.no_grad():
        for mine, theirs in zip(reference.parameters(), replica.parameters()):
            mine.copy_(theirs)
    shard = slice(8 * rank, 8 * (rank + 1))
    for step in range(3):
        loss = ((model(data[shard]) - target[shard]) ** 2).mean()
        loss.backward()
        _sgd_step(list(replica.parameters()))
        full = ((reference(data) - target) ** 2).mean()
        full.backward()
        _sgd_step(list(reference.parameters()))
    for (name, mine), theirs in zip(replica.named_parameters(), reference.parameters()):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, err_msg=name)
    # no_sync: gradients stay local, then the next synced backward averages the sum
    with model.no_sync():
        ((model(data[shard]) - target[shard]) ** 2).mean().backward()
    local = replica.w2.grad.clone()
    ((model(data[shard]) - target[shard]) ** 2).mean().backward()
    gathered = [et.zeros_like(local) for _ in range(size)]
    dist.all_gather(gathered, local)
    # Both backwards saw the same parameters and data: the synced one averages 2 * local.
    np.testing.assert_allclose(replica.w2.grad.numpy(), 2 * sum(g.numpy() for g in gathered) / size, rtol=1e-12)
    assert not np.allclose(gathered[0].numpy(), gathered[-1].numpy())  # the shards differ
    assert list(model.state_dict())[0] == "module.w1"
    print(f"OK ddp {rank}", flush=True)


if __name__ == "__main__":
    scenario, *arguments = sys.argv[1:]
    globals()[scenario](*arguments)
