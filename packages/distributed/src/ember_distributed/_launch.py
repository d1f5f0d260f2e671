"""The command lines and environments of a job's workers: shared by the launcher (`run`) and `spawn`."""

import os
import shutil
import sys

__all__ = ["mpiexec_command", "launch_command", "worker_environments"]


def mpiexec_command():
    """The mpiexec to use: beside this Python (the mpich wheel puts it there), else on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = beside if os.path.exists(beside) else shutil.which("mpiexec")
    if found is None:
        raise SystemExit("ember_distributed.run: mpiexec not found; install the mpich wheel "
                         "(pip install mpich) or an MPI of your system")
    return found


def worker_environments(nproc, nnodes=1, node_rank=0, master_addr="127.0.0.1", master_port=29500,
                        restart_count=0, max_restarts=0, run_id="none", rank_offset=None, world_size=None):
    """The variables torchrun gives each of this node's ``nproc`` workers, in local-rank order.

    ``rank_offset`` (this node's first global rank) and ``world_size`` default to every
    node running ``nproc`` workers; an elastic rendezvous gives them when nodes differ.
    """
    rank_offset = node_rank * nproc if rank_offset is None else rank_offset
    world_size = nnodes * nproc if world_size is None else world_size
    environments = []
    for local_rank in range(nproc):
        rank = rank_offset + local_rank
        environments.append({
            "RANK": rank, "LOCAL_RANK": local_rank, "WORLD_SIZE": world_size, "LOCAL_WORLD_SIZE": nproc,
            "GROUP_RANK": node_rank, "GROUP_WORLD_SIZE": nnodes, "ROLE_RANK": rank, "ROLE_WORLD_SIZE": world_size,
            "ROLE_NAME": "default", "MASTER_ADDR": master_addr, "MASTER_PORT": master_port,
            "TORCHELASTIC_RESTART_COUNT": restart_count, "TORCHELASTIC_MAX_RESTARTS": max_restarts,
            "TORCHELASTIC_RUN_ID": run_id, "TORCHELASTIC_USE_AGENT_STORE": "False",
        })
    return environments


def launch_command(nproc, program, master_addr="127.0.0.1", master_port=29500, environments=None,
                   mpiexec_options=()):
    """The mpiexec command line that runs ``program`` (a list of arguments) ``nproc`` times.

    One MPMD block per rank, each with its own RANK / LOCAL_RANK in its environment.
    """
    if environments is None:
        environments = worker_environments(nproc, master_addr=master_addr, master_port=master_port)
    command = [mpiexec_command(), *mpiexec_options]
    for rank, settings in enumerate(environments):
        if rank:
            command.append(":")
        command += ["-n", "1"]
        for name, value in settings.items():
            command += ["-env", name, str(value)]
        command += program
    return command
