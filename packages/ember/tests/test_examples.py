"""The examples run end to end (on tiny settings where they take any): a smoke test each."""
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize("script, expected", [
    ("train_linear.py", "learned y = 3.0000x + 2.0000"),
    ("custom_kernel.py", "jacobi_solve(A, b):"),
])
def test_example_runs(script, expected):
    result = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert expected in result.stdout
