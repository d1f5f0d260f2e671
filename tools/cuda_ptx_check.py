"""Check that every CUDA kernel the simulator runs also compiles for a real GPU.

    python tools/cuda_ptx_check.py [pytest targets ...]
    python tools/cuda_ptx_check.py --compile RECORD   (step 2 alone, on a recorder's file)

Step 1 runs the given tests (default: every CUDA test file) on Numba's CUDA simulator
with the `cuda_kernel_recorder` plugin, which records each kernel launch and the Numba
types of its arguments. Step 2, in a fresh interpreter with the simulator off, compiles
each recorded (kernel, argument types) pair to PTX with NVVM (`numba.cuda.compile_ptx`,
no GPU or driver needed; NVVM comes with the nvidia-nvvm / cuda-toolkit wheels). The
simulator runs kernels as Python, so only this step proves that the kernels are valid
CUDA code; it does not prove them fast or correct on hardware. Exit status 1 when a
kernel fails to compile.
"""
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The CUDA test files, and the tests that take the device as a parameter (cuda_guard.DEVICES).
DEFAULT_TARGETS = [str(p.relative_to(ROOT)) for p in sorted(ROOT.glob("packages/*/tests/test_*.py"))
                   if "cuda" in p.name or re.search(r"^from cuda_guard import .*\bDEVICES\b", p.read_text(), re.M)]
TARGET_CC = (9, 0)


def _pythonpath():
    paths = [str(p) for p in sorted(ROOT.glob("packages/*/src"))] + [str(ROOT / "tools")]
    return os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])


def record(targets, path):
    """Run `targets` on the simulator, recording kernel launches into `path`."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", EMBER_KERNEL_RECORD=path, PYTHONPATH=_pythonpath())
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "cuda_kernel_recorder", "-p", "no:cacheprovider", *targets]
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def _resolve(module_name, filename, qualname):
    """The real-CUDA dispatcher of a recorded kernel, or None when it cannot be named.

    Kernel modules that ember generates into its cache directory (elementwise loops,
    reductions) are not importable by name: they are loaded again from their file.
    """
    import importlib
    import importlib.util
    if module_name is None:  # compiled in memory (a closure over a device function)
        return None
    module = sys.modules.get(module_name)
    if module is None:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError:
            if not os.path.exists(filename):
                return None
            spec = importlib.util.spec_from_file_location(module_name, filename)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _pretend_a_device():
    """Device functions compile for "the current device": make that a TARGET_CC one.

    numba-cuda asks the driver for the current device's compute capability when a kernel
    calls a `cuda.jit(device=True)` function; there is no driver here.
    """
    import types

    from numba.cuda import dispatcher
    device = types.SimpleNamespace(compute_capability=TARGET_CC, id=0)
    dispatcher.get_current_device = lambda: device


# The start of a `run_ptx_script` script: the simulator off, NVVM probed, a pretend device.
_SCRIPT_PRELUDE = """\
import os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
from numba import cuda, types
try:
    cuda.compile_ptx(lambda a: None, (types.float32[:],), cc=(9, 0))
except Exception as error:  # no NVVM: nothing to check here
    print("NO NVVM", error)
    sys.exit(0)
from cuda_ptx_check import _pretend_a_device
_pretend_a_device()
"""


def run_ptx_script(body, timeout=300):
    """Run the Python source `body` in a fresh interpreter with the CUDA simulator off, for
    tests of kernels this tool cannot name (made in memory): `cuda` and `types` (Numba's)
    are imported, and device functions compile for a TARGET_CC device, no GPU needed.

    Returns the finished process (text output), or None where there is no NVVM to compile
    with (nothing can be checked). A script prints "PTX OK" as its last step, which the
    caller checks with the exit status.
    """
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "tools"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", _SCRIPT_PRELUDE + body], env=env, capture_output=True, text=True,
                          timeout=timeout)
    return None if "NO NVVM" in done.stdout else done


def _compile_share(path, share, shares):
    """Compile records share, share + shares, ... of `path` (one worker's part): returns
    (compiled count, failures, unresolved names)."""
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"  # the real compiler, whatever the parent set
    from numba import cuda
    _pretend_a_device()
    with open(path, "rb") as fh:
        # (str: a kernel compiled in memory records its module as None)
        records = sorted(pickle.load(fh), key=lambda r: (str(r[0]), str(r[2]), str(r[3])))[share::shares]
    failures, unresolved, compiled = [], set(), 0
    for module_name, filename, qualname, types in records:
        if types is None:
            failures.append((module_name, qualname, "?", "an argument Numba cannot type"))
            continue
        kernel = _resolve(module_name, filename, qualname)
        if kernel is None or not hasattr(kernel, "py_func"):
            unresolved.add(f"{module_name}.{qualname}")
            continue
        try:
            cuda.compile_ptx(kernel.py_func, types, cc=TARGET_CC)
            compiled += 1
        except Exception as error:  # report every failure, not only the first
            first = str(error).strip().splitlines()
            failures.append((module_name, qualname, str(types), " | ".join(first[:3])[:400]))
    return compiled, failures, unresolved


def compile_all(path, workers=None):
    """Compile every recorded kernel to PTX in `workers` processes (default: the CPUs this
    process may use; compiling is CPU-bound and each specialisation is independent);
    print a summary; return the failure count."""
    import concurrent.futures
    import multiprocessing

    workers = workers or max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")  # a fresh interpreter each: no forked Numba state
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        parts = list(pool.map(_compile_share, [path] * workers, range(workers), [workers] * workers))
    compiled = sum(part[0] for part in parts)
    failures = [failure for part in parts for failure in part[1]]
    unresolved = set().union(*(part[2] for part in parts))
    seconds = time.perf_counter() - start
    print(f"{compiled} kernel specialisations compiled to PTX for sm_{TARGET_CC[0]}{TARGET_CC[1]} "
          f"in {seconds:.0f} s by {workers} processes; {len(failures)} failed; {len(unresolved)} kernels could "
          "not be named (closures: not checked)")
    for name in sorted(unresolved):
        print("  not checked:", name)
    for module_name, qualname, types, message in failures:
        print(f"FAILED {module_name}.{qualname}{types if types != '?' else ''}\n    {message}")
    return len(failures)


def main(argv):
    if argv[:1] == ["--compile"]:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "0"  # the real compiler, whatever the caller set
        return 1 if compile_all(argv[1]) else 0
    targets = argv or DEFAULT_TARGETS
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernels.pickle")
        status = record(targets, path)
        if not os.path.exists(path):
            print("no kernel was recorded")
            return 1
        env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", PYTHONPATH=_pythonpath())
        compiled = subprocess.run([sys.executable, __file__, "--compile", path], cwd=ROOT, env=env).returncode
    return compiled or (1 if status else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
