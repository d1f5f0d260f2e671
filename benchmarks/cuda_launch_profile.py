"""Where the host time of one small CUDA op goes: ember's `add(a, b, out=out)` on 8
elements, called many times under cProfile, with the functions that take the most time
of their own. On a GPU each such op is bound by host time (PyTorch queues one in ~6 us),
so this says which layer to thin: ember's dispatch, its launch plan, or Numba's launch
(argument typing and marshalling).

Run: ``python -m benchmarks.cuda_launch_profile`` (``--quick``: fewer calls, e.g. under
NUMBA_ENABLE_CUDASIM=1, where the simulator's own frames dominate).
"""
import argparse
import cProfile
import io
import pstats
import time

__all__ = ["main"]


def main(argv=None):
    """Print the per-call host time of a small add and its cProfile top functions."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cuda_launch_profile")
    parser.add_argument("--quick", action="store_true", help="a few calls (a smoke run)")
    parser.add_argument("--top", type=int, default=18, help="functions to list")
    args = parser.parse_args(argv)
    import ember_tensor as t
    calls = 20 if args.quick else 3000
    a, b = t.rand(8, device="cuda"), t.rand(8, device="cuda")
    out = t.empty(8, device="cuda")
    for _ in range(10):  # compile and warm every cache first
        t.add(a, b, out=out)
    t.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        t.add(a, b, out=out)
    t.cuda.synchronize()
    per_call = (time.perf_counter() - start) / calls
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        t.add(a, b, out=out)
    t.cuda.synchronize()
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(args.top)
    print(f"# host time of add(a, b, out=out) on 8 CUDA elements: {per_call * 1e6:.1f} us a call "
          f"({calls} calls, unprofiled)")
    lines = text.getvalue().splitlines()
    body = [line for line in lines if line.strip()][2:]  # from the column header on
    print("\n".join(line.replace("/opt/torch/.venv/lib/python3.12/site-packages/", "") for line in body))


if __name__ == "__main__":
    main()
