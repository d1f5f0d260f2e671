"""Smoke test of the CUDA benchmark script (benchmarks/cuda_ops.py) on tiny sizes.

`python -m benchmarks.cuda_ops --quick --no-torch` under Numba's CUDA simulator must run
every workload (elementwise, reductions, float32/bfloat16 matmul, copies, the MNIST conv
net and MLP training steps) and print its table, so the script works when a GPU is lent.
The benchmarks live in the repository, not in a package: skipped where they are absent.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.skipif(not (REPO / "benchmarks" / "cuda_ops.py").exists(), reason="no benchmarks/ checkout")
def test_cuda_benchmarks_run_quick_on_the_simulator():
    pytest.importorskip("numba.cuda")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in sys.path if p]))
    result = subprocess.run([sys.executable, "-m", "benchmarks.cuda_ops", "--quick", "--no-torch"],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ") and "---" not in line]
    names = " ".join(rows)
    for workload in ("add 8 elem", "a + b 1e+03 bf16", "sum dim=0", "matmul 16x16 f32", "matmul 16x16 bf16",
                     "MNIST conv net SGD step", "MLP 16-8-8-10 SGD step"):
        assert workload in names, f"{workload!r} missing from:\n{result.stdout}"
    assert len(rows) == 1 + 15  # the header and every workload
