"""Everything ember checks on a real GPU, in one run that fits a short lease of a GPU machine.

    python tools/gpu_run.py --out DIR [--deadline SECONDS] [--quick] [--skip-tests]
                            [--skip-bench] [--tests PYTEST_ARGS] [--node-ids FILE]

1. The environment: the card, its driver, and the versions of Python, NumPy, Numba,
   numba-cuda, nvmath-python (cuBLAS) and PyTorch there.
2. The CUDA tests of every package (the files `tools/cuda_ptx_check.py` lists, the
   `gpu`-marked ones included, and the fused programs' `test_fus*.py`) with
   NUMBA_ENABLE_CUDASIM=0, selected by `-k "cuda or gpu"` (the device parameter's id,
   or a file or test named for CUDA): one pytest per package,
   the tensor suite spread over several processes (pytest-xdist) while the other packages
   run beside it. Each writes a JUnit report; a run past its share of the deadline is
   interrupted (SIGINT), which still writes the report of what ran.
3. The CUDA benchmark tables, side by side with PyTorch's CUDA build: the two ceilings
   first (`benchmarks.cuda_ceilings`: a 1 GiB device-to-device copy and 8192² matrix
   products), then `cuda_ops`, `cuda_nn_rows`, `cuda_sort_scan` and `cuda_fft` rating bytes against
   the copy bandwidth measured there (`cuda_launch_config` times elementwise ops under
   several launch shapes), the kernel launches of a training step
   (`cuda_launches`) and where a small op's host time goes (`cuda_launch_profile`).
4. `summary.md`: the test totals and failures, every table, and the issue's targets
   (elementwise at >= 80% of the copy bandwidth, matmul <= 1.1x PyTorch, softmax and
   layer_norm <= 1.2x, training steps <= 2.0x, sort of 1e7 <= 2.0x) marked met or not.
   It is printed last; the full logs and JUnit reports go to DIR (logs.tar.gz).

Tests run before benchmarks: they compile most kernels (in parallel, into Numba's disk
cache) that the benchmarks then load. `--quick` runs the benchmarks at tiny sizes and a
handful of tests: with NUMBA_ENABLE_CUDASIM=1 it checks this script on a machine
without a GPU (what `packages/ember/tests/test_gpu_run.py` does).
"""
import argparse
import json
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from cuda_ptx_check import DEFAULT_TARGETS  # noqa: E402 - the CUDA test files, one list

# Simulator smoke tests of benchmark scripts: the real run below replaces them.
_NOT_ON_A_GPU = {"packages/ember/tests/test_cuda_benchmarks.py"}
# CUDA cases that `cuda_ptx_check` does not list: the fused programs' kernels (ember-tensor's
# `fusion`, ember-compile's passes), compiled in memory per program, which that check cannot
# name (each file compiles its own PTX). Their bit-for-bit checks against eager are what a
# GPU can fail and the simulator cannot (NVVM's contractions: packages/tensor/README.md).
_ALSO_ON_A_GPU = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("packages/*/tests/test_fus*.py"))
_TABLES = ["cuda_ceilings", "cuda_ops", "cuda_launch_config", "cuda_nn_rows", "cuda_sort_scan", "cuda_fft"]
_BENCHMARKS = _TABLES + ["cuda_launches", "cuda_launch_profile"]
# Each module's share of the time the benchmarks have (what it took on an H100, roughly).
_SHARES = {"cuda_ceilings": 0.1, "cuda_ops": 0.2, "cuda_launch_config": 0.1, "cuda_nn_rows": 0.2, "cuda_sort_scan": 0.15,
           "cuda_fft": 0.1, "cuda_launches": 0.1, "cuda_launch_profile": 0.05}
# (row name starts with, what is compared, the bound): the targets on a GPU.
TARGETS = [
    ("a + b 1e+08 f32", "copy share", 0.8), ("add 1e+08 f32", "copy share", 0.8),
    ("a * 2 1e+08 f32", "copy share", 0.8), ("exp 1e+08 f32", "copy share", 0.8),
    ("matmul 4096x4096 f32", "ratio", 1.1), ("matmul 4096x4096 bf16", "ratio", 1.1),
    ("softmax last dim", "ratio", 1.2), ("log_softmax last dim", "ratio", 1.2),
    ("layer_norm fwd+bwd", "ratio", 1.2),
    ("MNIST conv net SGD step", "ratio", 2.0), ("MLP 784-512-512-10 SGD step", "ratio", 2.0),
    ("sort 1e+07 (one row)", "ratio", 2.0),
]


class Clock:
    """The time left before the run's deadline."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()


def _pythonpath():
    paths = [str(p) for p in sorted(ROOT.glob("packages/*/src"))] + [str(ROOT), str(ROOT / "tools")]
    return os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])


def _env(simulator):
    return dict(os.environ, NUMBA_ENABLE_CUDASIM="1" if simulator else "0", PYTHONPATH=_pythonpath(),
                PYTHONUNBUFFERED="1")


def _run(cmd, log, env, timeout, echo=False):
    """Run `cmd` with its output appended to `log`; SIGINT at `timeout` seconds (then
    SIGKILL 30 s later). Returns (exit status, its output)."""
    with open(log, "a") as fh:
        fh.write(f"\n$ {shlex.join(cmd)}\n")
        fh.flush()
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT)  # pytest writes its report on an interrupt
            try:
                out, _ = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, _ = proc.communicate()
            out += f"\n[gpu_run: stopped at its time limit, {timeout:.0f} s]\n"
        fh.write(out)
        fh.write(f"[exit {proc.returncode}, {time.monotonic() - start:.0f} s]\n")
    if echo:
        print(out, end="", flush=True)
    return proc.returncode, out


# --- 1. the environment --------------------------------------------------------------------

_VERSIONS = """
import importlib, platform
print("python", platform.python_version())
for name in ("numpy", "numba", "numba_cuda", "llvmlite", "nvmath", "torch", "ml_dtypes", "pytest", "xdist"):
    try:
        module = importlib.import_module(name)
        print(name, getattr(module, "__version__", "?"))
    except Exception as error:
        print(name, "missing:", type(error).__name__, str(error)[:100])
import ember_tensor
print("ember cuda available", ember_tensor.cuda.is_available())
if ember_tensor.cuda.is_available():
    print("ember device", ember_tensor.cuda.get_device_name())
    from ember_tensor._backends.cuda import blas
    print("ember cuBLAS (nvmath-python)", blas.available())
"""


def environment(out, simulator):
    """Write and return the card, driver and package versions."""
    log = out / "env.txt"
    if not simulator:
        _run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem",
              "--format=csv"], log, _env(False), 30)
    _run([sys.executable, "-c", _VERSIONS], log, _env(simulator), 120)
    return log.read_text()


# --- 2. the tests ----------------------------------------------------------------------------

def _test_files(quick, node_ids=None):
    """{package: [test files or node ids]}: every CUDA test file, a few (`quick`), or the
    node ids listed in the file `node_ids` (a rerun of failures)."""
    if node_ids:
        files = [line.strip() for line in Path(node_ids).read_text().splitlines() if line.strip()]
    else:
        files = [t for t in dict.fromkeys(DEFAULT_TARGETS + _ALSO_ON_A_GPU) if t not in _NOT_ON_A_GPU]
    if quick and not node_ids:  # a few small files: the script's plumbing, not the suite
        keep = ("test_cuda_launch.py", "test_cuda_memory.py", "test_cuda_fused.py", "test_cuda.py")
        files = [f for f in files if f.endswith(keep) and "vision" not in f]
    by_package = {}
    for f in files:
        by_package.setdefault(f.split("/")[1], []).append(f)
    return by_package


def _pytest(package, files, out, simulator, workers, extra, per_test_limit, select=True):
    """Start pytest on one package's CUDA tests (`select`: only those named for CUDA);
    returns (the process, its JUnit report's path)."""
    junit = out / f"junit-{package}.xml"
    cmd = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider",
           *(["-k", "cuda or gpu"] if select else []),
           f"--junitxml={junit}", "-o", "junit_family=xunit1", *extra, *files]
    if workers > 1:
        cmd[3:3] = ["-n", str(workers)]
    if per_test_limit:
        cmd[3:3] = ["--timeout", "300"]  # one hung test must not eat the lease (pytest-timeout)
    return subprocess.Popen(cmd, cwd=ROOT, env=_env(simulator), stdout=open(out / f"tests-{package}.log", "w"),
                            stderr=subprocess.STDOUT, start_new_session=True), junit


def tests(out, budget, simulator, quick, extra, node_ids=None):
    """Run every package's CUDA tests (or the node ids listed in the file `node_ids`); the
    tensor suite over most CPUs, the rest beside it one package after another. Returns the
    JUnit reports written."""
    import importlib.util
    have = {name: importlib.util.find_spec(name) is not None for name in ("xdist", "pytest_timeout")}
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    by_package = _test_files(quick, node_ids)
    tensor_workers = max(1, cpus - 5) if have["xdist"] else 1
    other_workers = 4 if have["xdist"] and cpus >= 8 else 1
    end = time.monotonic() + budget
    reports = []

    def start(package, workers):
        proc, junit = _pytest(package, by_package[package], out, simulator, workers, extra,
                              per_test_limit=have["pytest_timeout"], select=not node_ids)
        reports.append(junit)
        return proc

    running = []
    if "tensor" in by_package:
        running.append(start("tensor", tensor_workers))
    queue = [p for p in by_package if p != "tensor"]
    side = None
    while running or queue or side:
        if side is None and queue:
            side = start(queue.pop(0), other_workers)
        if side is not None and side.poll() is not None:
            side = None
            continue
        running = [p for p in running if p.poll() is None]
        if time.monotonic() > end:  # past the share: interrupt, so each writes its report
            for proc in running + ([side] if side else []):
                os.killpg(proc.pid, signal.SIGINT)
            for proc in running + ([side] if side else []):
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
            with open(out / "tests-interrupted.txt", "w") as fh:
                fh.write(f"interrupted at the tests' share of the deadline; not started: {queue}\n")
            break
        time.sleep(0.5)
    return [r for r in reports if r.exists()]


def test_totals(reports):
    """Per package: (tests, failures, errors, skipped, seconds) and the failures' ids and
    first message lines, from the JUnit reports."""
    totals, failures = {}, []
    for report in reports:
        package = report.stem.removeprefix("junit-")
        root = ElementTree.parse(report).getroot()
        n = f = e = s = 0
        seconds = 0.0
        for case in root.iter("testcase"):
            n += 1
            seconds += float(case.get("time") or 0)
            for kind in ("failure", "error", "skipped"):
                node = case.find(kind)
                if node is None:
                    continue
                if kind == "skipped":
                    s += 1
                    continue
                f += kind == "failure"
                e += kind == "error"
                message = (node.get("message") or node.text or "").strip().splitlines()
                failures.append(f"{package}: {case.get('classname')}::{case.get('name')} "
                                f"({kind}) {message[0][:300] if message else ''}")
        totals[package] = (n, f, e, s, seconds)
    return totals, failures


# --- 3. the benchmarks -----------------------------------------------------------------------

def benchmarks(out, clock, simulator, quick, tables=None):
    """Run the tables (ceilings first), the launch counts and the launch profile, or only
    the modules named in `tables`; returns their JSON rows and the copy bandwidth."""
    log = out / "bench.log"
    env = _env(simulator)
    flags = ["--quick"] if quick else []
    chosen = [m for m in _BENCHMARKS if tables is None or m in tables]
    results = {}
    bandwidth = 0.0
    reserve = 15.0 * len(chosen)  # each later module keeps a little time for itself
    for index, module in enumerate(chosen):
        path = out / f"{module}.json"
        cmd = [sys.executable, "-m", f"benchmarks.{module}", *flags]
        if module != "cuda_launch_profile":
            cmd += ["--json", str(path)]
        if bandwidth and module in _TABLES:
            cmd += ["--bandwidth", f"{bandwidth / 1e9:.1f}"]
        later = sum(_SHARES[m] for m in chosen[index:])
        budget = (clock.left() - reserve) * _SHARES[module] / later
        _run(cmd, log, env, max(30.0, min(budget, clock.left() - 10)), echo=True)
        reserve -= 15.0
        if path.exists():
            results[module] = json.loads(path.read_text())
        if module == "cuda_ceilings":
            bandwidth = copy_bandwidth(results.get(module))
    return results, bandwidth


def copy_bandwidth(ceilings):
    """Bytes/s of the device-to-device copy row: PyTorch's where measured, else ember's."""
    for row in (ceilings or {}).get("rows", []):
        if row["name"].startswith("device-to-device copy"):
            times = row.get("torch") or row.get("ember")
            if times:
                return row["work"] / times[0]
    return 0.0


def target_lines(results, bandwidth):
    """One line per target of the issue: the figure, the bound, met or not."""
    # Timed rows only (the launch counts reuse the training steps' names).
    rows = {row["name"]: row for data in results.values() for row in data.get("rows", [])
            if "ember" in row or "error" in row}
    lines = []
    for prefix, kind, bound in TARGETS:
        row = next((r for name, r in rows.items() if name.startswith(prefix)), None)
        if row is None or "ember" not in row:
            lines.append(f"- {prefix}: not measured{' (' + row['error'][:200] + ')' if row and 'error' in row else ''}")
            continue
        if kind == "ratio":
            if "torch" not in row:
                lines.append(f"- {prefix}: no PyTorch time to compare")
                continue
            value = row["ember"][0] / row["torch"][0]
            met = value <= bound
            lines.append(f"- {row['name']}: ember/torch {value:.2f} (target <= {bound}): {'met' if met else 'NOT met'}")
        else:
            if not bandwidth:
                lines.append(f"- {prefix}: no copy bandwidth measured")
                continue
            value = row["work"] / row["ember"][0] / bandwidth
            met = value >= bound
            lines.append(f"- {row['name']}: {value:.0%} of the copy bandwidth (target >= {bound:.0%}): "
                         f"{'met' if met else 'NOT met'}")
    return lines


# --- 4. the summary --------------------------------------------------------------------------

def summary(out, env_text, totals, failures, results, bandwidth, seconds, simulator):
    """Write summary.md (environment, test totals and failures, tables, targets); return it."""
    lines = ["# ember on a GPU: tools/gpu_run.py", "", "## Environment", "", "```", env_text.strip(), "```", "",
             f"## CUDA tests (NUMBA_ENABLE_CUDASIM={int(simulator)})", "",
             "| package | tests | failed | errors | skipped | test seconds |", "|---|---|---|---|---|---|"]
    for package, (n, f, e, s, secs) in sorted(totals.items()):
        lines.append(f"| {package} | {n} | {f} | {e} | {s} | {secs:.0f} |")
    if (out / "tests-interrupted.txt").exists():
        lines.append("\n" + (out / "tests-interrupted.txt").read_text().strip())
    lines += ["", f"{len(failures)} failed or in error" + (":" if failures else ".")]
    lines += [f"- {f}" for f in failures[:80]]
    if len(failures) > 80:
        lines.append(f"- ... and {len(failures) - 80} more (logs.tar.gz)")
    lines += ["", "## Benchmarks", ""]
    bench_log = out / "bench.log"
    if bench_log.exists():  # the tables, and the launch profile's lines
        lines += [line for line in bench_log.read_text().splitlines()
                  if line.startswith(("#", "|")) or re.match(r"\s+(ncalls|\d+(/\d+)?\s+\d)", line)]
    lines += ["", f"## Targets (copy bandwidth measured: {bandwidth / 1e9:.0f} GB/s)", ""]
    lines += target_lines(results, bandwidth)
    lines += ["", f"gpu_run took {seconds:.0f} s."]
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    return text


def _bundle(out):
    """Pack every log and report into logs.tar.gz (the device tool brings back few files)."""
    with tarfile.open(out / "logs.tar.gz", "w:gz") as tar:
        for path in sorted(out.iterdir()):
            if path.name not in ("logs.tar.gz", "summary.md") and path.is_file():
                tar.add(path, arcname=path.name)
                path.unlink()


def main(argv=None):
    """Run the stages within --deadline; exit status 1 when a test failed."""
    parser = argparse.ArgumentParser(prog="python tools/gpu_run.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for summary.md and logs.tar.gz")
    parser.add_argument("--deadline", type=float, default=540, help="seconds the whole run may take")
    parser.add_argument("--tests-share", type=float, default=0.45, help="share of the deadline for the tests")
    parser.add_argument("--quick", action="store_true", help="tiny benchmarks and a few tests (simulator smoke run)")
    parser.add_argument("--skip-tests", action="store_true")
    parser.add_argument("--skip-bench", action="store_true")
    parser.add_argument("--tests", default="", help="extra pytest arguments, e.g. '-x'")
    parser.add_argument("--node-ids", help="a file of test node ids (or files), one a line: run those instead")
    parser.add_argument("--benchmarks", help="comma-separated benchmark modules to run (default: all of "
                                             + ", ".join(_BENCHMARKS) + ")")
    args = parser.parse_args(argv)
    start = time.monotonic()
    clock = Clock(args.deadline)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    simulator = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
    print(f"gpu_run on {platform.node()}: simulator={simulator} quick={args.quick} deadline={args.deadline:.0f} s",
          flush=True)
    env_text = environment(out, simulator)
    print(env_text, flush=True)
    reports = []
    if not args.skip_tests:
        reports = tests(out, args.tests_share * clock.left(), simulator, args.quick, shlex.split(args.tests),
                        args.node_ids)
    totals, failures = test_totals(reports)
    print(f"tests done at {time.monotonic() - start:.0f} s: {totals}", flush=True)
    tables = args.benchmarks.split(",") if args.benchmarks else None
    results, bandwidth = ({}, 0.0) if args.skip_bench else benchmarks(out, clock, simulator, args.quick, tables)
    text = summary(out, env_text, totals, failures, results, bandwidth, time.monotonic() - start, simulator)
    _bundle(out)
    print(text, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
