"""The launcher: ``python -m ember_distributed.run --nproc-per-node N script.py args`` (or ``ember-run``).

It starts N copies of the script under one ``mpiexec`` (the mpich wheel's, or the first on
PATH), so they share one MPI world, and gives each the variables PyTorch's launcher sets:
RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT. The exit status
is the job's: non-zero if any process failed (mpiexec then stops the others).
"""

import argparse
import os
import shutil
import subprocess
import sys

__all__ = ["main", "mpiexec_command", "launch_command"]


def mpiexec_command():
    """The mpiexec to use: beside this Python (the mpich wheel puts it there), else on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = beside if os.path.exists(beside) else shutil.which("mpiexec")
    if found is None:
        raise SystemExit("ember_distributed.run: mpiexec not found; install the mpich wheel "
                         "(pip install mpich) or an MPI of your system")
    return found


def launch_command(nproc, program, master_addr="127.0.0.1", master_port=29500):
    """The mpiexec command line that runs ``program`` (a list of arguments) ``nproc`` times.

    One MPMD block per rank, each with its own RANK / LOCAL_RANK in its environment.
    """
    command = [mpiexec_command()]
    for rank in range(nproc):
        if rank:
            command.append(":")
        settings = {"RANK": rank, "LOCAL_RANK": rank, "WORLD_SIZE": nproc, "LOCAL_WORLD_SIZE": nproc,
                    "GROUP_RANK": 0, "MASTER_ADDR": master_addr, "MASTER_PORT": master_port}
        command += ["-n", "1"]
        for name, value in settings.items():
            command += ["-env", name, str(value)]
        command += program
    return command


def _parser():
    parser = argparse.ArgumentParser(
        prog="ember-run", description="Start a distributed ember job on this machine, through mpiexec.")
    parser.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                        help="number of processes to start (default 1)")
    parser.add_argument("--nnodes", type=int, default=1, help="only 1: for several nodes, run mpiexec yourself")
    parser.add_argument("--master-addr", "--master_addr", default="127.0.0.1")
    parser.add_argument("--master-port", "--master_port", type=int, default=29500)
    parser.add_argument("-m", "--module", action="store_true", help="run the script argument as a module")
    parser.add_argument("--no-python", "--no_python", action="store_true", help="run the script as a program")
    parser.add_argument("script", help="the training script (or module with -m)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    return parser


def main(argv=None):
    """Entry point of ``ember-run``; returns the job's exit status."""
    args = _parser().parse_args(argv)
    if args.nnodes != 1:
        raise SystemExit("ember-run starts processes on this machine only (--nnodes 1); across nodes, use "
                         "your cluster's mpiexec/srun, which sets ranks for ember_distributed directly")
    if args.nproc_per_node < 1:
        raise SystemExit("--nproc-per-node must be at least 1")
    if args.no_python:
        program = [args.script]
    else:
        program = [sys.executable, "-u"] + (["-m", args.script] if args.module else [args.script])
    command = launch_command(args.nproc_per_node, program + args.script_args, args.master_addr, args.master_port)
    return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
