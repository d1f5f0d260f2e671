"""Faults under ember's launcher, each in real processes: a rank that never joins, a rank
killed by SIGKILL, a straggler past the timeout. Every surviving rank must raise
DistBackendError within its timeout (the worker asserts how fast and reports to a file),
the launcher must name the rank that failed first, and no process may be left behind.
Also torchrun's flags and environment, restarts, and two "nodes" on one machine."""

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ember_distributed.run import worker_environments

WORKER = str(Path(__file__).parent / "mpi_worker.py")


def launch(*arguments, timeout=180, env=None):
    """Run the launcher; (exit status, output, seconds). The timeout only guards against a
    hang (each test bounds its own times): CI runs these beside a compiling tox env, where
    a restarted two-rank job took over 60 s."""
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "ember_distributed.run", *arguments], capture_output=True,
                            text=True, timeout=timeout, env=env)
    return result.returncode, result.stdout + result.stderr, time.monotonic() - start


def leftovers(token):
    """Processes still running whose command line holds ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if token in command:
                found.append(command)
    return found


@pytest.fixture
def token():
    """A word passed to the workers, to find any process of the test that outlives it."""
    value = f"ember-fault-{uuid.uuid4().hex[:8]}"
    yield value
    assert not leftovers(value), leftovers(value)


@pytest.fixture
def report(tmp_path, monkeypatch):
    path = tmp_path / "report"
    monkeypatch.setenv("EMBER_TEST_REPORT", str(path))
    return path


def _root_cause(output):
    return output.split("Root Cause (first observed failure):", 1)[1]


def test_rank_that_never_joins_makes_the_others_raise_naming_it(token, report):
    code, output, seconds = launch("--standalone", "--grace-period", "1", "--nproc-per-node", "2", WORKER,
                                   "no_show", token)
    assert code == 1, output
    assert "OK no_show 0: DistBackendError" in report.read_text(), output
    assert "rank(s) [1] of 2 never joined" in output
    assert "rank      : 0 (local_rank: 0)" in _root_cause(output)  # rank 0 raised first; rank 1 was stopped
    assert seconds < 20, output


def test_killed_peer_is_detected_in_seconds_and_reported_as_root_cause(token, report):
    code, output, seconds = launch("--standalone", "--grace-period", "2", "--nproc-per-node", "2", WORKER,
                                   "killed_peer", token)
    assert code == 1, output
    assert "OK killed_peer 0: DistBackendError" in report.read_text(), output
    root = _root_cause(output)
    assert "rank      : 1 (local_rank: 1)" in root and "exitcode  : -9" in root and "SIGKILL" in root, output
    assert "exitcode  : 1" in output.split("Root Cause")[0]  # the survivor raised, was not killed
    assert seconds < 20, output


@pytest.mark.parametrize("n", [3])
def test_killed_peer_every_survivor_raises(token, report, n):
    code, output, _ = launch("--standalone", "--grace-period", "3", "--nproc-per-node", str(n), WORKER,
                             "killed_peer", token)
    assert code == 1, output
    for rank in (0, 2):
        assert f"OK killed_peer {rank}: DistBackendError" in report.read_text(), output


def test_straggler_past_the_timeout(token, report):
    code, output, seconds = launch("--standalone", "--grace-period", "5", "--nproc-per-node", "2", WORKER,
                                   "straggler", token)
    assert code == 1, output
    text = report.read_text()
    assert "OK straggler 0: DistributedTimeoutError" in text, output
    assert "OK straggler 1: DistBackendError" in text, output  # late, it learns rank 0 is gone
    assert seconds < 20, output


def test_torchrun_flags_set_torchruns_environment(token):
    code, output, _ = launch("--standalone", "--nproc_per_node=2", "--max_restarts=0", WORKER, "torchrun_env")
    assert code == 0, output
    assert "OK torchrun_env 0/2 group 0 restart 0" in output and "OK torchrun_env 1/2 group 0 restart 0" in output


def test_max_restarts_runs_the_job_again_after_a_failure(tmp_path, token):
    code, output, _ = launch("--standalone", "--max-restarts", "1", "--grace-period", "2", "--nproc-per-node", "2",
                             WORKER, "fail_once", str(tmp_path / "failed-once"))
    assert code == 0, output
    assert "exitcode  : 7" in output and "restarting the job (1/1)" in output
    assert "OK fail_once 0 restart 1" in output and "OK fail_once 1 restart 1" in output


def test_two_nodes_on_one_machine(token):
    # The README's recipe: one launcher per node, the same --master-addr/--master-port.
    port = str(_free_port())
    common = ["--nnodes", "2", "--nproc-per-node", "1", "--master-addr", "127.0.0.1", "--master-port", port]
    nodes = [subprocess.Popen([sys.executable, "-m", "ember_distributed.run", *common, "--node-rank", str(rank),
                               WORKER, "torchrun_env", token], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for rank in (1, 0)]
    outputs = [node.communicate(timeout=90)[0] for node in nodes]
    assert all(node.returncode == 0 for node in nodes), outputs
    assert "OK torchrun_env 0/2 group 0" in outputs[1] and "OK torchrun_env 1/2 group 1" in outputs[0]


def test_worker_environments_map_nodes_to_global_ranks():
    second_node = worker_environments(2, nnodes=3, node_rank=1, master_addr="10.0.0.1", master_port=1234)
    assert [(e["RANK"], e["LOCAL_RANK"], e["GROUP_RANK"]) for e in second_node] == [(2, 0, 1), (3, 1, 1)]
    assert all(e["WORLD_SIZE"] == 6 and e["LOCAL_WORLD_SIZE"] == 2 and e["MASTER_ADDR"] == "10.0.0.1"
               for e in second_node)


@pytest.mark.parametrize("flags, message", [
    (["--nnodes", "2", "--node-rank", "2"], "--node-rank 2 must be in [0, --nnodes 2)"),
    (["--nnodes", "2", "--standalone"], "--standalone runs one node"),
])
def test_launcher_rejects_what_it_cannot_do(flags, message):
    code, output, _ = launch(*flags, "script.py")
    assert code != 0 and message in output


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
