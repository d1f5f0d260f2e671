"""Smoke tests of the CUDA benchmark script (benchmarks/cuda_ops.py) and of tools/gpu_run.py on tiny sizes.

`python -m benchmarks.cuda_ops --quick --no-torch` under Numba's CUDA simulator must run
every workload (elementwise, reductions, float32/bfloat16 matmul, copies, the MNIST conv
net and MLP training steps, SGD and Adam) and print its table, so the script works when a GPU is lent.
The benchmarks and tools/gpu_run.py live in the repository, not in a package: skipped where
they are absent.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _quick_table(module):
    """Run `python -m benchmarks.<module> --quick --no-torch` on the simulator: its table's
    rows (the header and one a workload) and its whole output."""
    pytest.importorskip("numba.cuda")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in sys.path if p]))
    result = subprocess.run([sys.executable, "-m", f"benchmarks.{module}", "--quick", "--no-torch"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return [line for line in result.stdout.splitlines() if line.startswith("| ") and "---" not in line], result.stdout


@pytest.mark.skipif(not (REPO / "benchmarks" / "cuda_ops.py").exists(), reason="no benchmarks/ checkout")
def test_cuda_benchmarks_run_quick_on_the_simulator():
    rows, stdout = _quick_table("cuda_ops")
    names = " ".join(rows)
    for workload in ("add 8 elem", "a + b 1e+03 bf16", "sum dim=0", "matmul 16x16 f32", "matmul 16x16 bf16",
                     "MNIST conv net SGD step", "MLP 16-8-8-10 SGD step", "MLP 16-8-8-10 Adam step"):
        assert workload in names, f"{workload!r} missing from:\n{stdout}"
    assert len(rows) == 1 + 16  # the header and every workload


@pytest.mark.skipif(not (REPO / "benchmarks" / "cuda_fft.py").exists(), reason="no benchmarks/ checkout")
def test_cuda_fft_benchmark_runs_quick_on_the_simulator():
    """benchmarks/cuda_fft.py runs every workload (the host computes the transforms there)."""
    rows, stdout = _quick_table("cuda_fft")
    assert len(rows) == 1 + 8, stdout  # the header and every workload
    for workload in ("fft 256 c64", "irfft 256 f32", "fft2 2x8x8 c64", "stft 2x1024 samples"):
        assert workload in " ".join(rows), f"{workload!r} missing from:\n{stdout}"


@pytest.mark.skipif(not (REPO / "tools" / "gpu_run.py").exists(), reason="no tools/ checkout")
def test_gpu_run_quick_on_the_simulator(tmp_path):
    """tools/gpu_run.py (the one script a GPU lease runs) runs end to end on the simulator:
    the environment, a listed test, the ceilings, launch-shape and launch-count tables and
    the launch profile, then summary.md and logs.tar.gz (its other files packed in)."""
    pytest.importorskip("numba.cuda")
    import tarfile
    listing = tmp_path / "rerun.txt"
    listing.write_text("packages/tensor/tests/test_cuda_memory.py::test_memory_stats_follow_tensors\n")
    out = tmp_path / "out"
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in sys.path if p]))
    result = subprocess.run([sys.executable, "tools/gpu_run.py", "--out", str(out), "--quick", "--deadline", "400",
                             "--node-ids", str(listing),
                             "--benchmarks", "cuda_ceilings,cuda_launch_config,cuda_launches,cuda_launch_profile"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = (out / "summary.md").read_text()
    assert "| tensor | 1 | 0 | 0 | 0 |" in summary, summary
    for heading in ("# GPU ceilings", "# grid-stride launch shapes", "# kernel launches per training step",
                    "# host time of add(a, b, out=out)", "## Targets"):
        assert heading in summary, f"{heading!r} missing from:\n{summary}"
    with tarfile.open(out / "logs.tar.gz") as tar:
        names = set(tar.getnames())
    assert {"env.txt", "bench.log", "junit-tensor.xml", "tests-tensor.log", "cuda_ceilings.json"} <= names
    assert sorted(p.name for p in out.iterdir()) == ["logs.tar.gz", "summary.md"]
