"""Process-wide settings ember_tensor makes at import (see _backends/cpu/startup.py): OpenMP's idle threads
sleep (OMP_WAIT_POLICY=PASSIVE) unless the user chose otherwise or opted out."""
import os
import subprocess
import sys

import pytest

SCRIPT = "import os, ember_tensor; print(os.environ.get('OMP_WAIT_POLICY'))"


def _run(**env):
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "EMBER_NO_THREAD_TUNING")}
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True,
                            env={**base, **env}, timeout=120)
    return result.stdout.strip()


@pytest.mark.parametrize("env, expected", [
    ({}, "PASSIVE"),
    ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE"),            # the user's choice wins
    ({"EMBER_NO_THREAD_TUNING": "1"}, "None"),             # opted out: left unset
])
def test_openmp_wait_policy(env, expected):
    assert _run(**env) == expected


def test_import_does_not_load_numba():
    # Kernels (and Numba with them) load on first use: `import ember_tensor` stays fast.
    script = "import sys, ember_tensor; print('numba' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert result.stdout.strip() == "False"
