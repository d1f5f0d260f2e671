"""``ember-run --nnodes MIN:MAX``: parsed as torchrun parses it, and with ``--rdzv-backend c10d``
the launchers meet at ``--rdzv-endpoint``; the job starts once MAX nodes joined, or
``last_call_timeout`` after MIN had. The launchers' rendezvous is tested in threads of
this process (several launchers, no workers), the launcher itself in real processes."""

import argparse
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from ember_distributed import run
from ember_distributed._node_rendezvous import node_rendezvous, parse_rdzv_conf

WORKER = str(Path(__file__).parent / "mpi_worker.py")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _parse_nnodes(text):
    """ember's answer for ``--nnodes text``: (min, max), or the error's message."""
    try:
        return run._nnodes(text)
    except (argparse.ArgumentTypeError, ValueError) as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize("text", ["1", "4", "1:2", "2:2", "3:8", "1:2:3", "2:1", "0", "0:2", "a:2"])
def test_nnodes_is_parsed_and_checked_as_torchrun(text):
    torch_run = pytest.importorskip("torch.distributed.run")
    try:
        min_nodes, max_nodes = torch_run.parse_min_max_nnodes(text)
        if not 0 < min_nodes <= max_nodes:  # torchrun's check, in config_from_args
            raise AssertionError(f"min_nodes must be > 0 and <= max_nodes, got min_nodes={min_nodes}, "
                                 f"max_nodes={max_nodes}")
        expected = (min_nodes, max_nodes)
    except ValueError:  # int("a"): argparse words it itself
        expected = "ValueError"
    except (RuntimeError, AssertionError) as error:
        expected = ("ArgumentTypeError", str(error))
    ours = _parse_nnodes(text)
    assert (ours[0] if ours[0] == "ValueError" else ours) == expected


def test_rdzv_conf_is_read_as_torchrun():
    utils = pytest.importorskip("torch.distributed.elastic.rendezvous.utils")
    text = "join_timeout=60, last_call_timeout=5,is_host=false"
    assert parse_rdzv_conf(text) == utils._parse_rendezvous_config(text)
    with pytest.raises(ValueError, match="must be in format"):
        parse_rdzv_conf("=1")


def _launchers(port, nodes, min_nodes, max_nodes, stagger=0.0, **options):
    """Run ``node_rendezvous`` for each node's nproc in its own thread; (placements or errors, seconds)."""
    run_id = uuid.uuid4().hex[:8]
    results = [None] * len(nodes)

    def launcher(i, nproc):
        try:
            results[i] = node_rendezvous("127.0.0.1", port, run_id, min_nodes, max_nodes, nproc, **options)
        except SystemExit as error:
            results[i] = str(error)

    threads = []
    start = time.monotonic()
    for i, nproc in enumerate(nodes):
        threads.append(threading.Thread(target=launcher, args=(i, nproc), daemon=True))
        threads[-1].start()
        time.sleep(stagger if i == 0 else 0.0)
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "a launcher hung in the rendezvous"
    return results, time.monotonic() - start


def test_max_nodes_close_the_rendezvous_at_once_with_ranks_in_join_order():
    # Nodes of different sizes: global ranks follow node by node, as torchrun assigns them.
    results, seconds = _launchers(_free_port(), [2, 3], 1, 2, stagger=0.2, last_call=20.0)
    first, second = results
    assert seconds < 10  # MAX joined: no wait for the last call
    assert (first.node_rank, first.nnodes, first.rank_offset, first.world_size) == (0, 2, 0, 5)
    assert (second.node_rank, second.nnodes, second.rank_offset, second.world_size) == (1, 2, 2, 5)
    assert first.master_addr == second.master_addr == "127.0.0.1" and first.master_port == second.master_port


def test_min_nodes_start_after_the_last_call():
    results, seconds = _launchers(_free_port(), [2], 1, 3, last_call=0.5)
    (only,) = results
    assert (only.node_rank, only.nnodes, only.world_size) == (0, 1, 2)
    assert 0.5 <= seconds < 10


def test_a_node_past_max_is_refused():
    results, _ = _launchers(_free_port(), [1, 1, 1], 1, 2, stagger=0.2, last_call=20.0)
    placements = [r for r in results if not isinstance(r, str)]
    refused = [r for r in results if isinstance(r, str)]
    assert sorted(p.node_rank for p in placements) == [0, 1] and all(p.world_size == 2 for p in placements)
    assert len(refused) == 1 and "closed with 2 node(s) before this node joined" in refused[0]


def test_too_few_nodes_time_out_with_a_clear_error():
    results, seconds = _launchers(_free_port(), [1], 2, 2, join_timeout=0.5)
    assert "the rendezvous timed out after 0.5 s: 1 of the 2 nodes needed" in results[0]
    assert seconds < 10


def test_an_unreachable_endpoint_is_an_error_not_a_hang():
    # 192.0.2.1 (TEST-NET-1) is nobody's address: this launcher is a client that cannot connect.
    start = time.monotonic()
    with pytest.raises(SystemExit, match=r"rendezvous at 192.0.2.1:29400 failed: .*timed out after 300ms"):
        node_rendezvous("192.0.2.1", 29400, "x", 1, 2, 1, join_timeout=0.3)
    assert time.monotonic() - start < 10


def _launch(port, *flags):
    return subprocess.Popen([sys.executable, "-m", "ember_distributed.run", "--rdzv-backend", "c10d",
                             "--rdzv-endpoint", f"127.0.0.1:{port}", *flags, WORKER, "torchrun_env"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_launcher_starts_with_min_nodes_when_no_more_come():
    start = time.monotonic()
    node = _launch(_free_port(), "--nnodes", "1:2", "--nproc-per-node", "2", "--rdzv-conf", "last_call_timeout=1")
    output = node.communicate(timeout=90)[0]
    assert node.returncode == 0, output
    assert "OK torchrun_env 0/2 group 0" in output and "OK torchrun_env 1/2 group 0" in output
    assert time.monotonic() - start >= 1


def test_two_launchers_meet_without_node_ranks():
    # torchrun's multi-node recipe: the same command on every node, no --node-rank.
    port = _free_port()
    flags = ["--nnodes", "1:2", "--nproc-per-node", "1", "--rdzv-conf", "last_call_timeout=60"]
    nodes = [_launch(port, *flags) for _ in range(2)]
    start = time.monotonic()
    outputs = [node.communicate(timeout=90)[0] for node in nodes]
    assert all(node.returncode == 0 for node in nodes), outputs
    everything = "".join(outputs)
    assert "OK torchrun_env 0/2 group 0" in everything and "OK torchrun_env 1/2 group 1" in everything
    assert time.monotonic() - start < 60  # MAX nodes came: no last call


@pytest.mark.parametrize("flags, message", [
    (["--nnodes", "1:2:3"], 'nnodes=1:2:3 is not in "MIN:MAX" format'),
    (["--nnodes", "2:1"], "min_nodes must be > 0 and <= max_nodes, got min_nodes=2, max_nodes=1"),
    (["--nnodes", "2:4", "--standalone"], "--standalone runs one node"),
    (["--nnodes", "1:2", "--rdzv-backend", "c10d"], "--rdzv-backend c10d needs --rdzv-endpoint"),
    (["--nnodes", "1:2", "--node-rank", "2"], "--node-rank 2 must be in [0, --nnodes 2)"),  # static runs MAX
    (["--nnodes", "1:2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "127.0.0.1:1", "--max-restarts", "1"],
     "--max-restarts needs --nnodes 1"),
])
def test_launcher_refuses_what_it_cannot_do(flags, message):
    result = subprocess.run([sys.executable, "-m", "ember_distributed.run", *flags, "script.py"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and message in result.stdout + result.stderr


def test_standalone_with_a_range_runs_one_node_at_once():
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "ember_distributed.run", "--standalone", "--nnodes", "1:4",
                             "--nproc-per-node", "2", WORKER, "torchrun_env"], capture_output=True, text=True,
                            timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK torchrun_env 1/2 group 0" in result.stdout
    assert time.monotonic() - start < 25  # not after a last call of 30 s for nodes that cannot come
