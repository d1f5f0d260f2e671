"""One process of ``spawn``: load the pickled function, run it, report an exception to the parent."""

import os
import pickle
import sys
import traceback


def main(job, work):
    rank = int(os.environ["RANK"])
    with open(job, "rb") as f:
        fn, args = pickle.load(f)
    try:
        fn(rank, *args)
    except BaseException:
        with open(os.path.join(work, f"error{rank}.txt"), "w") as f:
            f.write(traceback.format_exc())
        sys.exit(1)


if __name__ == "__main__":
    main(*sys.argv[1:3])
