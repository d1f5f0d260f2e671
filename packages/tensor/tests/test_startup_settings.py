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


FAULTS = """
import resource, numpy as np, ember_tensor
from ember_tensor._backends.cpu import startup
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
def step():
    # As a training step: 16 arrays of 1 MiB alive together, then all freed.
    arrays = [np.ones(1 << 18, np.float32) for _ in range(16)]
    del arrays
for _ in range(3):
    step()
before = faults()
for _ in range(10):
    step()
print(faults() - before, startup.keep_freed_memory())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc is tuned on Linux only")
@pytest.mark.parametrize("env, reused", [({}, True), ({"EMBER_NO_MALLOC_TUNING": "1"}, False),
                                         ({"MALLOC_MMAP_THRESHOLD_": "131072"}, False)])
def test_freed_arrays_memory_is_reused_not_faulted_in_again(env, reused):
    # Without the tuning glibc gives the freed 16 MiB back (past its trim threshold) and
    # faults the pages in again each step: ~4000 page faults a step.
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("MALLOC_") and k not in ("GLIBC_TUNABLES", "EMBER_NO_MALLOC_TUNING")}
    result = subprocess.run([sys.executable, "-c", FAULTS], capture_output=True, text=True, check=True,
                            env={**base, **env}, timeout=120)
    faults, tuned = result.stdout.split()
    assert (int(faults) < 500) == reused, result.stdout
    assert tuned == str(reused)


VECTORS = """
import os, sys
if os.environ.get("IMPORT_NUMBA_FIRST"):
    import numba
import ember_tensor
from ember_tensor._backends.cpu.startup import cpu_flags
import numba
from numba.core.registry import cpu_target
numba.njit(lambda x: x + 1)(1)
print("avx512f" in cpu_flags(), cpu_target.target_context.codegen().magic_tuple()[2].endswith(",-prefer-256-bit"))
"""


@pytest.mark.parametrize("env, wide", [
    ({}, True),                                        # AVX-512: 512-bit vectors
    ({"EMBER_NO_VECTOR_TUNING": "1"}, False),          # opted out
    ({"NUMBA_CPU_FEATURES": "+avx2,+fma"}, False),     # the user's features win
    ({"IMPORT_NUMBA_FIRST": "1"}, False),              # too late: Numba read its features already
])
def test_numba_gets_512_bit_vectors_on_avx512(env, wide):
    base = {k: v for k, v in os.environ.items()
            if k not in ("NUMBA_CPU_FEATURES", "NUMBA_CPU_NAME", "EMBER_NO_VECTOR_TUNING")}
    result = subprocess.run([sys.executable, "-c", VECTORS], capture_output=True, text=True, check=True,
                            env={**base, **env}, timeout=120)
    avx512, set_wide = result.stdout.split()
    # Without AVX-512 nothing is ever set (the first case then checks that too).
    assert set_wide == str(wide and avx512 == "True"), result.stdout
