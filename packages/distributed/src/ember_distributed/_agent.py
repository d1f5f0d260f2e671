"""One worker's keeper, run by ember's launcher as the process mpiexec starts for a rank.

``python _agent.py STATUS_DIR program args...``: runs the program as a child (handing it
the process manager's PMI descriptors, so MPI works in the child as in the agent itself),
forwards SIGINT and SIGTERM to it, ignores SIGUSR1 (mpiexec's notice of a failed rank,
whose default action would end the agent; the workers learn of it from their store), and
when it ends writes
``STATUS_DIR/rank<R>.json`` with its exit code and time: what the launcher reports, as
torchrun does. It is started by file path and imports only the standard library, so it
starts in milliseconds and holds little memory.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time


def _inherited_descriptors():
    descriptors = []
    for name in ("PMI_FD", "HYDI_CONTROL_FD"):
        value = os.environ.get(name, "")
        if value.isdigit():
            descriptors.append(int(value))
    return tuple(descriptors)


def main(status_dir, program):
    child = subprocess.Popen(program, pass_fds=_inherited_descriptors())

    def forward(signum, frame):
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, forward)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    code = child.wait()
    rank = os.environ.get("RANK", "0")
    status = {"rank": int(rank), "local_rank": int(os.environ.get("LOCAL_RANK", rank)), "exitcode": code,
              "pid": child.pid, "time": time.time(), "host": socket.gethostname()}
    path = os.path.join(status_dir, f"rank{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(status, f)
    os.replace(path + ".tmp", path)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
