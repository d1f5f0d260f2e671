"""Cold start: a fresh process importing the library, and compiling kernels from an empty cache."""
import os
import subprocess
import sys
import tempfile
import time

_IMPORT = {"ember": "import ember_tensor", "torch": "import torch"}
# A typical elementwise/reduction mix of a training step, for the compile-time figure.
_STEP = {
    "ember": "import ember_tensor as t",
    "torch": "import torch as t",
}
_STEP_BODY = """
x = t.rand(64, 32); w = t.rand(32, 16)
y = (x @ w).relu(); z = y.sigmoid() * 2.0 + y.exp() - 1.0
s = (z * z).sum() + z.mean() + z.amax()
"""


def _time_process(code, env=None):
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - t


def measure(libs, repeats=3):
    """{name: {lib: seconds}} for import-only and first-step runs, warm and empty cache."""
    results = {}
    for lib in libs:
        results.setdefault("import (fresh process)", {})[lib] = min(
            _time_process(_IMPORT[lib]) for _ in range(repeats))
        step = _STEP[lib] + _STEP_BODY
        _time_process(step)  # make sure the cache is warm
        results.setdefault("import + first step (warm cache)", {})[lib] = min(
            _time_process(step) for _ in range(repeats))
        if lib == "ember":
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, EMBER_CACHE_DIR=cache)
                results.setdefault("import + first step (empty cache)", {})[lib] = _time_process(step, env)
    return results
