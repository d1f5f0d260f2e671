"""``spawn(fn, args, nprocs)``: ``torch.multiprocessing.spawn`` for ember jobs.

The processes are started by one ``mpiexec`` (see `run`), so they form one MPI world;
each calls ``fn(i, *args)``. ``fn`` and ``args`` travel pickled, so ``fn`` must be a
module-level function, as with PyTorch.
"""

import os
import pickle
import subprocess
import sys
import tempfile

from ._launch import launch_command

__all__ = ["spawn", "ProcessRaisedException", "ProcessExitedException"]


class ProcessExitedException(RuntimeError):
    """A spawned process exited with a non-zero status without a Python exception."""


class ProcessRaisedException(RuntimeError):
    """A spawned process raised; the message holds its traceback."""


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` in ``nprocs`` processes (i = 0 .. nprocs-1) and wait for them.

    Raises:
        ProcessRaisedException: a process raised; the message is its traceback.
        ProcessExitedException: a process died otherwise (a signal, ``os._exit``).
    """
    if not join:
        raise NotImplementedError("spawn(join=False) is not supported: ember waits for the processes")
    with tempfile.TemporaryDirectory(prefix="ember-spawn-") as work:
        job = os.path.join(work, "job.pickle")
        with open(job, "wb") as f:
            pickle.dump((fn, tuple(args)), f)
        program = [sys.executable, "-u", "-m", "ember_distributed._spawn_worker", job, work]
        status = subprocess.call(launch_command(nprocs, program))
        for rank in range(nprocs):
            failure = os.path.join(work, f"error{rank}.txt")
            if os.path.exists(failure):
                with open(failure) as f:
                    raise ProcessRaisedException(f"\n\n-- Process {rank} terminated with the following error:\n"
                                                 f"{f.read()}")
        if status != 0:
            raise ProcessExitedException(f"a spawned process exited with status {status}")
