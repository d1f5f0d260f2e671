"""The launcher: ``python -m ember_distributed.run [torchrun flags] script.py args`` (or ``ember-run``).

On one node it starts ``--nproc-per-node`` copies of the script under one ``mpiexec``
(the mpich wheel's, or the first on PATH), so they share one MPI world (shared memory
between them), and gives each the variables torchrun sets: RANK, LOCAL_RANK,
WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_*.
With ``--nnodes N`` it runs this node's share of the ranks (``--node-rank``), each under
its own ``mpiexec -n 1``; every rank meets the others at MASTER_ADDR:MASTER_PORT (the
TCPStore of global rank 0) and MPI joins them into one world (see `_rendezvous`).
With ``--rdzv-backend c10d`` the launchers first meet at ``--rdzv-endpoint`` and take
node ranks in the order they come; ``--nnodes MIN:MAX`` starts the job once MIN nodes
have joined and no more came within the last call, or at once when MAX have (see
`_node_rendezvous`). The static backend, as torchrun's, runs MAX nodes.

Failures are handled as torchrun does: mpiexec runs with ``-disable-auto-cleanup`` so
that it does not kill the survivors of a dead rank (they raise ``DistBackendError`` at
their next collective instead); each rank runs under a small keeper (`_agent`) that
records its exit status; once a rank fails, the others get ``--grace-period`` seconds to
finish (or raise) before they are stopped; the launcher then prints which rank failed
first and how, restarts the job if ``--max-restarts`` allows, and exits non-zero.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

from ._launch import launch_command, mpiexec_command, worker_environments
from ._node_rendezvous import DEFAULT_RDZV_PORT, node_rendezvous, parse_rdzv_conf, static_placement

__all__ = ["main", "mpiexec_command", "launch_command", "worker_environments"]

_AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_agent.py")
_POLL_SECONDS = 0.1


def _nnodes(text):
    """torchrun's ``--nnodes``: N or MIN:MAX, as (min_nodes, max_nodes), checked as torchrun does."""
    parts = str(text).split(":")
    if len(parts) > 2:
        raise argparse.ArgumentTypeError(f'nnodes={text} is not in "MIN:MAX" format')
    min_nodes, max_nodes = int(parts[0]), int(parts[-1])
    if not 0 < min_nodes <= max_nodes:
        raise argparse.ArgumentTypeError(f"min_nodes must be > 0 and <= max_nodes, got min_nodes={min_nodes}, "
                                         f"max_nodes={max_nodes}")
    return min_nodes, max_nodes


def _nproc(text):
    if text in ("cpu", "auto"):
        return os.cpu_count() or 1
    if text == "gpu":
        raise argparse.ArgumentTypeError("--nproc-per-node gpu: ember runs on CPU processes; give a number")
    return int(text)


def _parser():
    parser = argparse.ArgumentParser(
        prog="ember-run", description="Start a distributed ember job (torchrun's flags), through mpiexec.")
    add = parser.add_argument
    add("--nnodes", type=_nnodes, default="1", help="number of nodes: N, or MIN:MAX (with --rdzv-backend c10d)")
    add("--node-rank", "--node_rank", type=int, default=0, help="this node's rank, 0 .. nnodes-1")
    add("--nproc-per-node", "--nproc_per_node", type=_nproc, default=1, help="processes on this node (or 'cpu')")
    add("--master-addr", "--master_addr", default="127.0.0.1", help="address of the node of rank 0")
    add("--master-port", "--master_port", type=int, default=29500, help="free port on the node of rank 0")
    add("--rdzv-endpoint", "--rdzv_endpoint", default="", help="host[:port]: overrides --master-addr/--master-port")
    add("--rdzv-backend", "--rdzv_backend", default="static",
        help="static (--node-rank given) or c10d (the launchers meet at --rdzv-endpoint); others act as static")
    add("--rdzv-id", "--rdzv_id", default="none", help="the job id (TORCHELASTIC_RUN_ID)")
    add("--rdzv-conf", "--rdzv_conf", default="",
        help="key=value,...: c10d's join_timeout (600 s) and last_call_timeout (30 s); others ignored")
    add("--local-addr", "--local_addr", default=None,
        help="this node's address for the other nodes (c10d; default: the endpoint's if it is here, else the FQDN)")
    add("--standalone", action="store_true", help="one node: rendezvous on a free local port")
    add("--max-restarts", "--max_restarts", type=int, default=0, help="restarts of the whole job after a failure")
    add("--monitor-interval", "--monitor_interval", type=float, default=_POLL_SECONDS,
        help="seconds between checks of the workers")
    add("--grace-period", "--grace_period", type=float, default=5.0,
        help="seconds the other ranks get to finish after one fails, before they are stopped (ember's)")
    add("-m", "--module", action="store_true", help="run the script argument as a module")
    add("--no-python", "--no_python", action="store_true", help="run the script as a program")
    add("script", help="the training script (or module with -m)")
    add("script_args", nargs=argparse.REMAINDER)
    return parser


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _endpoint(text):
    """(host, port) of ``--rdzv-endpoint host[:port]`` (torchrun's port 29400 by default)."""
    host, _, port = text.rpartition(":") if ":" in text else (text, "", str(DEFAULT_RDZV_PORT))
    return host, int(port)


def _check_flags(args):
    """Refuse, saying why, what ember's launcher cannot do with these flags."""
    min_nodes, max_nodes = args.nnodes
    if args.nproc_per_node < 1:
        raise SystemExit("--nproc-per-node must be at least 1")
    if args.standalone and min_nodes != 1:
        # Nobody else can reach a standalone rendezvous: MIN > 1 would wait for nobody.
        raise SystemExit(f"--standalone runs one node: it cannot be used with --nnodes {min_nodes}:{max_nodes} "
                         f"(give --nnodes 1 or 1:MAX)")
    if args.standalone:
        return
    if args.rdzv_backend == "c10d":
        if not args.rdzv_endpoint:
            raise SystemExit("--rdzv-backend c10d needs --rdzv-endpoint host[:port]: where the launchers meet")
        if args.node_rank != 0:
            _warn(f"node_rank is only used for static rdzv_backend. It will be ignored for "
                  f"rdzv_backend={args.rdzv_backend}.")
    elif not 0 <= args.node_rank < max_nodes:
        raise SystemExit(f"--node-rank {args.node_rank} must be in [0, --nnodes {max_nodes})")
    if args.max_restarts and max_nodes > 1:
        raise SystemExit("--max-restarts needs --nnodes 1: ember's launchers on several nodes do not restart "
                         "together")


def _placement(args):
    """Where this node's workers sit in the job, as torchrun's rendezvous backends decide."""
    min_nodes, max_nodes = args.nnodes
    if args.standalone:
        # One node; with 1:MAX torchrun would wait its last call for nodes that cannot come.
        return static_placement(0, 1, args.nproc_per_node, "127.0.0.1", _free_port())
    if args.rdzv_backend == "c10d":
        host, port = _endpoint(args.rdzv_endpoint)
        conf = parse_rdzv_conf(args.rdzv_conf)
        return node_rendezvous(host, port, args.rdzv_id, min_nodes, max_nodes, args.nproc_per_node,
                               join_timeout=float(conf.get("join_timeout", 600)),
                               last_call=float(conf.get("last_call_timeout", 30)), local_addr=args.local_addr)
    # torchrun's static rendezvous: --node-rank among MAX nodes.
    addr, port = _endpoint(args.rdzv_endpoint) if args.rdzv_endpoint else (args.master_addr, args.master_port)
    return static_placement(args.node_rank, max_nodes, args.nproc_per_node, addr, port)


def _warn(message):
    print(f"ember-run: warning: {message}", file=sys.stderr, flush=True)


_THREADS_BANNER = (
    "*****************************************\n"
    "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system "
    "being overloaded, please further tune the variable for optimal performance in your application as "
    "needed. \n*****************************************")


def _thread_default(nproc):
    """torchrun's default: several workers on a node each get one OpenMP/BLAS thread (and
    ember's thread budget follows OMP_NUM_THREADS=1) unless the user chose a number."""
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        return {"OMP_NUM_THREADS": 1}
    return {}


class _Job:
    """One attempt: this node's workers, started, watched and stopped."""

    def __init__(self, args, program, placement, restart_count):
        self.status_dir = tempfile.mkdtemp(prefix="ember-run-")
        environments = worker_environments(args.nproc_per_node, placement.nnodes, placement.node_rank,
                                           placement.master_addr, placement.master_port, restart_count,
                                           args.max_restarts, args.rdzv_id, rank_offset=placement.rank_offset,
                                           world_size=placement.world_size)
        for env in environments:
            env.update(_thread_default(args.nproc_per_node))
        wrapped = [sys.executable, _AGENT, self.status_dir] + program
        if placement.nnodes == 1:
            commands = [(launch_command(args.nproc_per_node, wrapped, environments=environments,
                                        mpiexec_options=["-disable-auto-cleanup"]), None)]
        else:
            # Across launchers, each rank is its own MPI world until init_process_group joins them.
            commands = [([mpiexec_command(), "-n", "1"] + wrapped,
                         dict(os.environ, **{k: str(v) for k, v in env.items()})) for env in environments]
        self.ranks = [env["RANK"] for env in environments]
        # Each in a session of its own, so that stopping the job reaches every process it made.
        self.processes = [subprocess.Popen(command, env=env, start_new_session=True) for command, env in commands]

    def statuses(self):
        found = {}
        for name in os.listdir(self.status_dir):
            if name.endswith(".json"):
                with open(os.path.join(self.status_dir, name)) as f:
                    status = json.load(f)
                found[status["rank"]] = status
        return found

    def watch(self, interval, grace):
        """Wait for the workers; returns (statuses, first failure or None)."""
        first_failure_seen = None
        while True:
            statuses = self.statuses()
            failures = [s for s in statuses.values() if s["exitcode"] != 0]
            if failures and first_failure_seen is None:
                first_failure_seen = time.monotonic()
            running = [p for p in self.processes if p.poll() is None]
            if not running:
                break
            if first_failure_seen is not None and time.monotonic() - first_failure_seen > grace:
                self.stop()
                break
            time.sleep(interval)
        statuses = self.statuses()
        for process in self.processes:  # a keeper that died itself leaves no status: say so
            if process.returncode not in (0, None) and not statuses:
                statuses[-1] = {"rank": -1, "local_rank": -1, "exitcode": process.returncode, "pid": process.pid,
                                "time": time.time(), "host": socket.gethostname()}
        failures = sorted((s for s in statuses.values() if s["exitcode"] != 0), key=_failure_order)
        return statuses, (failures[0] if failures else None)

    def stop(self):
        """SIGTERM every process of the job, then SIGKILL what is left after 3 s."""
        for signum, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 1.0)):
            for process in self.processes:
                if process.poll() is None:
                    try:
                        os.killpg(process.pid, signum)
                    except ProcessLookupError:
                        pass
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and any(p.poll() is None for p in self.processes):
                time.sleep(0.05)
        for process in self.processes:
            try:  # workers reparented away from mpiexec still belong to its session's group
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()

    def close(self):
        shutil.rmtree(self.status_dir, ignore_errors=True)


# A rank killed by a signal is taken to have failed this much before its keeper noticed.
# Its peers detect the death within milliseconds and exit with an error of their own, and
# on a loaded machine their keepers can record that exit before the dead rank's keeper is
# scheduled: the killed rank is the root cause, as torchrun reports it. (Not SIGTERM: the
# launcher stops the survivors with it once the grace period is over.)
_SIGNAL_DEATH_ALLOWANCE = 0.5


def _failure_order(status):
    code = status["exitcode"]
    killed = code < 0 and -code != signal.SIGTERM
    return status["time"] - (_SIGNAL_DEATH_ALLOWANCE if killed else 0.0)


def _describe(status):
    code = status["exitcode"]
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"{code} (pid: {status['pid']})", f"Signal {-code} ({name}) received by PID {status['pid']}"
    return f"{code} (pid: {status['pid']})", "see the rank's output above"


def _report(script, statuses, first):
    """torchrun's failure summary: every failed rank, and the first one as the root cause."""
    rule = "=" * 60
    lines = [rule, f"{script} FAILED", "-" * 60, "Failures:"]

    def block(index, status):
        exitcode, cause = _describe(status)
        stamp = time.strftime("%Y-%m-%d_%H:%M:%S", time.localtime(status["time"]))
        return [f"[{index}]:", f"  time      : {stamp}", f"  host      : {status['host']}",
                f"  rank      : {status['rank']} (local_rank: {status['local_rank']})",
                f"  exitcode  : {exitcode}", f"  traceback : {cause}"]

    others = [s for s in sorted(statuses.values(), key=lambda s: s["time"]) if s["exitcode"] != 0 and s is not first]
    if not others:
        lines.append("  <NO_OTHER_FAILURES>")
    for index, status in enumerate(others, 1):
        lines += block(index, status)
    lines += ["-" * 60, "Root Cause (first observed failure):"] + block(0, first) + [rule]
    sys.stderr.write("\n".join(lines) + "\n")
    sys.stderr.flush()


def _terminated(signum, frame):
    raise SystemExit(128 + signum)


def main(argv=None):
    """Entry point of ``ember-run``; returns the job's exit status (0, or 1 after a failure)."""
    args = _parser().parse_args(argv)
    _check_flags(args)
    placement = _placement(args)
    if _thread_default(args.nproc_per_node):
        print(_THREADS_BANNER, file=sys.stderr, flush=True)
    if args.no_python:
        program = [args.script]
    else:
        program = [sys.executable, "-u"] + (["-m", args.script] if args.module else [args.script])
    program += args.script_args
    signal.signal(signal.SIGTERM, _terminated)
    run_id = args.rdzv_id if args.rdzv_id != "none" else uuid.uuid4().hex[:8]
    args.rdzv_id = run_id
    for attempt in range(args.max_restarts + 1):
        job = _Job(args, program, placement, attempt)
        try:
            statuses, first = job.watch(args.monitor_interval, args.grace_period)
        except BaseException:  # Ctrl-C, SIGTERM: take the workers down with the launcher
            job.stop()
            raise
        finally:
            job.close()
        if first is None:
            return 0
        _report(args.script, statuses, first)
        if attempt < args.max_restarts:
            sys.stderr.write(f"ember-run: restarting the job ({attempt + 1}/{args.max_restarts})\n")
            if args.standalone:
                placement = placement._replace(master_port=_free_port())
    return 1


if __name__ == "__main__":
    sys.exit(main())
