"""`python -m ember.precompile`: a workload it ran compiles nothing in a later process."""
import os
import subprocess
import sys

import pytest

from ember import precompile

# Runs a workload in a fresh process and prints how many functions Numba compiled (a cache
# hit compiles none), then compiles one uncacheable function so that the count is seen to
# work.
_COUNT_COMPILES = """
import numba
import numba.core.compiler as compiler
count = [0]
original = compiler.compile_extra
def counting(*args, **kwargs):
    count[0] += 1
    return original(*args, **kwargs)
compiler.compile_extra = counting
from ember.precompile import run_workload
run_workload("linear", "float32")
print(count[0])
numba.njit(lambda x: x + 1)(1)
print(count[0])
"""


def _env(cache):
    return dict(os.environ, EMBER_CACHE_DIR=str(cache), NUMBA_CACHE_DIR=str(cache))


def test_precompiled_workload_compiles_nothing_in_a_fresh_process(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ember.precompile", "--only", "linear", "--jobs", "1"],
                          env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "[1/1] linear float32" in done.stderr
    assert any(tmp_path.rglob("*.nbi"))  # Numba's cache index files were written there
    counts = subprocess.run([sys.executable, "-c", _COUNT_COMPILES], env=_env(tmp_path),
                            capture_output=True, text=True, timeout=300, check=True).stdout.split()
    assert counts == ["0", "1"]


@pytest.mark.parametrize("argv", [["--jobs", "0"], ["--only", "no_such_workload"],
                                  ["--dtypes", "int8"], ["--jobs", "two"]])
def test_bad_arguments_exit_with_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        precompile.main(argv)
    assert exc.value.code == 2
    assert "usage: python -m ember.precompile" in capsys.readouterr().err


def test_list_prints_the_workloads(capsys):
    assert precompile.main(["--list"]) == 0
    assert capsys.readouterr().out.split() == list(precompile.WORKLOADS)


def test_unknown_names_and_bad_jobs_raise():
    with pytest.raises(ValueError, match="unknown workload or dtype"):
        precompile.precompile(["no_such_workload"])
    with pytest.raises(ValueError, match="unknown workload or dtype"):
        precompile.precompile(["linear"], dtypes=["int8"])
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        precompile.precompile(["linear"], jobs=-1)
