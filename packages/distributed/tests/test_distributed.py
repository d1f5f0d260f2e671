"""ember_distributed under real MPI processes: every collective and dtype against NumPy,
async ops, p2p, groups, objects, the error and fault cases, the rendezvous paths, the
launcher and spawn. Each test starts ``mpiexec`` (the mpich wheel's) with a scenario of
mpi_worker.py; a scenario asserts its own results and exits non-zero on any failure."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ember_distributed as dist
from ember_distributed.run import launch_command, mpiexec_command

HERE = Path(__file__).parent
WORKER = str(HERE / "mpi_worker.py")


@pytest.fixture(autouse=True)
def _remove_leaked_mpich_segments():
    """Ranks that die or _exit (the fault tests) leave MPICH's shared-memory files behind."""
    shm = Path("/dev/shm")
    before = set(shm.glob("mpich_shm_*")) if shm.is_dir() else set()
    yield
    if shm.is_dir():
        for leftover in set(shm.glob("mpich_shm_*")) - before:
            leftover.unlink(missing_ok=True)


def run(command, timeout=120, check=True, env=None):
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    output = result.stdout + result.stderr
    if check:
        assert result.returncode == 0, output
    return result.returncode, output


def mpiexec(n, *scenario, options=()):
    return [mpiexec_command(), *options, "-n", str(n), sys.executable, WORKER, *scenario]


@pytest.mark.parametrize("n", [2, 4])
def test_collectives_every_dtype_against_numpy(n):
    _, output = run(mpiexec(n, "collectives"))
    for rank in range(n):
        assert f"OK collectives {rank}" in output


@pytest.mark.parametrize("n", [2, 4])
def test_sharding_collectives_p2p_batches_subgroups_and_device_mesh(n):
    _, output = run(mpiexec(n, "sharding_collectives"), timeout=60)
    for rank in range(n):
        assert f"OK sharding_collectives {rank}" in output


def test_ddp_matches_single_process_training_on_the_whole_batch():
    _, output = run(mpiexec(2, "ddp"))
    assert "OK ddp 0" in output and "OK ddp 1" in output


def test_absent_peer_times_out_naming_the_operation(tmp_path):
    report = tmp_path / "report"
    _, output = run(mpiexec(2, "absent_peer"), check=False, env=dict(os.environ, EMBER_TEST_REPORT=str(report)))
    assert report.exists() and "OK absent_peer 0" in report.read_text(), output


def test_dead_peer_never_leaves_the_job_hanging(tmp_path):
    # A rank killed by a signal: mpiexec stops the whole job at once (its default). Where a
    # survivor is still running, its collective raises DistBackendError from the health
    # watch (or, at worst, the group's timeout) instead (the worker reports it).
    report = tmp_path / "report"
    start = time.monotonic()
    code, output = run(mpiexec(2, "dead_peer"), check=False, timeout=60,
                       env=dict(os.environ, EMBER_TEST_REPORT=str(report)))
    assert time.monotonic() - start < 30, output
    assert code != 0, output  # the killed rank fails the job
    # An empty report is a missing one: mpiexec stopped the survivor between its opening the
    # file and writing the line (seen once in CI).
    if report.exists() and report.read_text():
        assert "OK dead_peer 0: DistBackendError" in report.read_text() or \
            "OK dead_peer 0: DistributedTimeoutError" in report.read_text()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("method", ["env", "tcp", "file"])
def test_rendezvous_of_separately_started_processes(method, tmp_path):
    port = _free_port()
    init_method = {"env": "env://", "tcp": f"tcp://127.0.0.1:{port}", "file": f"file://{tmp_path}/rendezvous"}
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    world_size = 3
    processes = [subprocess.Popen(mpiexec(1, "rendezvous", init_method[method], str(rank), str(world_size)),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
                 for rank in (2, 0, 1)]
    outputs = [p.communicate(timeout=120)[0] for p in processes]
    for process, output in zip(processes, outputs):
        assert process.returncode == 0, output
    assert all(f"OK rendezvous {rank}" in "".join(outputs) for rank in range(world_size))
    assert not list(tmp_path.iterdir())  # the file rendezvous cleans up after itself


def test_plain_python_process_cannot_join_and_says_how_to_start():
    script = ("import ember_distributed as dist\n"
              "dist.init_process_group('mpi', init_method='tcp://127.0.0.1:1', rank=0, world_size=2)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI", "HYD", "MPI"))}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode != 0
    assert "this process was not started by mpiexec" in result.stderr


def test_env_rendezvous_names_missing_variable():
    from ember_distributed._startup import rendezvous_store

    env = {k: v for k, v in os.environ.items() if k not in ("MASTER_ADDR", "MASTER_PORT")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "environ", env)
        with pytest.raises(ValueError, match="environment variable MASTER_ADDR expected, but not set"):
            rendezvous_store("env://", 1, 2, 5.0, required=True)


def test_launcher_sets_pytorch_variables_and_runs_the_seed_hello():
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    _, output = run([sys.executable, "-m", "ember_distributed.run", "--nproc-per-node", "2", WORKER, "launched"],
                    env=env)
    assert "Hello from process 0 (out of 2)!" in output
    assert "Hello from process 1 (out of 2)!" in output
    # torchrun's default for several workers a node: one thread each, said once, and
    # ember's thread budget follows it
    assert output.count("Setting OMP_NUM_THREADS environment variable for each process to be 1") == 1
    assert output.count("threads 1 1") == 2
    _, output = run([sys.executable, "-m", "ember_distributed.run", "--nproc-per-node", "2", WORKER, "launched"],
                    env=dict(env, OMP_NUM_THREADS="2"))
    assert "Setting OMP_NUM_THREADS" not in output and output.count("threads 2 ") == 2


def test_launcher_exit_status_is_the_jobs():
    code, _ = run([sys.executable, "-m", "ember_distributed.run", "--nproc-per-node", "2", "--no-python",
                   sys.executable, "-c", "raise SystemExit(3)"], check=False)
    assert code != 0


def test_launch_command_gives_each_rank_its_environment():
    command = launch_command(2, ["prog"], master_port=1234)
    blocks = " ".join(command[1:]).split(" : ")
    assert len(blocks) == 2
    assert "-env RANK 1" in blocks[1] and "-env LOCAL_RANK 1" in blocks[1] and "-env WORLD_SIZE 2" in blocks[1]
    assert "-env MASTER_PORT 1234" in blocks[0]


def _spawned(rank, directory):
    dist.init_process_group("mpi")
    Path(directory, f"rank{rank}").write_text(str(dist.get_world_size()))


def _spawned_failure(rank):
    if rank == 1:
        raise ValueError("boom in rank 1")


def test_spawn_runs_fn_with_each_rank(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    import test_distributed

    dist.spawn(test_distributed._spawned, args=(str(tmp_path),), nprocs=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rank0", "rank1"]
    assert (tmp_path / "rank0").read_text() == "2"


def test_spawn_reports_a_workers_exception_with_its_traceback(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    import test_distributed

    with pytest.raises(dist.ProcessRaisedException, match=r"(?s)Process 1 terminated.*ValueError: boom in rank 1"):
        dist.spawn(test_distributed._spawned_failure, nprocs=2)


def test_use_before_init_is_pytorchs_error():
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_rank()


def test_backend_names():
    assert dist.Backend("GLOO") == "gloo"
    with pytest.raises(ValueError, match="Invalid backend: 'tpu'"):
        dist.Backend("tpu")
    assert dist.is_available() and dist.is_mpi_available() and not dist.is_nccl_available()


def test_environment_queries_read_the_launchers_variables(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    assert dist.get_node_local_rank(fallback_rank=3) == 3 and not dist.is_torchelastic_launched()
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "none")
    assert dist.get_node_local_rank(fallback_rank=3) == 1 and dist.is_torchelastic_launched()
    assert dist.DeviceMesh is dist.device_mesh.DeviceMesh and callable(dist.init_device_mesh)
