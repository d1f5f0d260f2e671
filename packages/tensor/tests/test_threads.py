"""The thread budget (`torch.get_num_threads`/`set_num_threads`, and the inter-op count):
PyTorch's values and errors, and one pool: ember's workers run its parallel kernels and
split products, the BLAS stays at one thread."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor._backends.cpu import threads as cpu_threads


@pytest.fixture
def restore_budget():
    before = et.get_num_threads()
    yield
    et.set_num_threads(before)


def test_default_is_numbas_thread_count():
    import numba

    assert et.get_num_threads() == numba.config.NUMBA_NUM_THREADS or cpu_threads._budget is not None


def test_set_and_get(restore_budget):
    et.set_num_threads(1)
    assert et.get_num_threads() == 1
    et.set_num_threads(64)  # more than Numba started: kept and reported, as PyTorch reports it
    assert et.get_num_threads() == 64


def test_one_thread_makes_every_kernel_serial(restore_budget):
    et.set_num_threads(1)
    assert not cpu_threads.parallel(1 << 30, 1)
    x = et.arange(1 << 17, dtype=et.float32)  # above every parallel threshold
    assert float((x * 2).sum()) == float(np.arange(1 << 17, dtype=np.float64).sum() * 2)
    et.set_num_threads(2)
    assert cpu_threads.parallel(1 << 30, 1)
    assert not cpu_threads.parallel(10, 1 << 15)  # a kernel's own threshold still holds


@pytest.mark.parametrize("budget", [1, 2, 4])
def test_the_blas_stays_at_one_thread_whatever_the_budget(restore_budget, budget):
    # ember splits products over its own workers: OpenBLAS's threads would be a second
    # pool spinning on the same cores. Held from import on, and after every set_num_threads.
    import ctypes

    np.ones((64, 64)) @ np.ones((64, 64))  # NumPy's BLAS is loaded
    getters = [getattr(ctypes.CDLL(path), name, None) for path in cpu_threads._loaded_openblas()
               for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                            "openblas_get_num_threads")]
    getters = [g for g in getters if g is not None]
    if not getters:
        pytest.skip("NumPy's BLAS here is not an OpenBLAS ember can find")
    getters[0].restype = ctypes.c_int
    assert getters[0]() == 1
    et.set_num_threads(budget)
    assert getters[0]() == 1 == cpu_threads.blas_threads()


def test_a_fresh_process_holds_the_blas_at_one_thread_from_import():
    # OMP_NUM_THREADS=2 gives OpenBLAS two threads when NumPy loads; importing ember
    # takes them back (OpenBLAS's own getter, read before any set_num_threads).
    script = ("import numpy; from ember_tensor._backends.cpu import threads; "
              "print(threads._budget, threads.blas_threads())")
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    budget, blas = out.stdout.split()
    if blas == "None":
        pytest.skip("NumPy's BLAS here is not an OpenBLAS ember can find")
    assert (budget, blas) == ("None", "1")  # the default budget (Numba's), the BLAS at one


@pytest.mark.parametrize("fn", ["set_num_threads", "set_num_interop_threads"])
def test_errors_as_pytorch(fn):
    with pytest.raises(RuntimeError, match=f"^{fn} expects a positive integer$"):
        getattr(et, fn)(0)
    with pytest.raises(RuntimeError, match=f"^{fn} expects an int, but got str$"):
        getattr(et, fn)("2")


def test_interop_threads_are_set_once():
    # In a fresh interpreter: the count can be set once per process.
    script = textwrap.dedent("""
        import ember_tensor as et
        assert et.get_num_interop_threads() >= 1
        et.set_num_interop_threads(3)
        assert et.get_num_interop_threads() == 3
        try:
            et.set_num_interop_threads(2)
        except RuntimeError as error:
            assert str(error) == ("Error: cannot set number of interop threads after parallel work has started "
                                  "or set_num_interop_threads called"), error
            print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ok", result.stderr


def test_run_parts_runs_each_part_on_its_own_thread_with_one_blas_thread(restore_budget):
    import threading

    et.set_num_threads(2)
    if cpu_threads._find_blas_setter() is None or cpu_threads._blas_getter is None:
        pytest.skip("no OpenBLAS thread setter found in this process")
    meet = threading.Barrier(3, timeout=10)  # passes only if the three parts run at once

    def part(i):
        meet.wait()
        return i, threading.get_ident(), cpu_threads._blas_getter()

    seen = cpu_threads.run_parts(part, 3)
    assert [i for i, _, _ in seen] == [0, 1, 2]  # results in part order
    assert len({ident for _, ident, _ in seen}) == 3
    assert all(blas == 1 for _, _, blas in seen)  # the BLAS at one thread in every part
    with pytest.raises(ZeroDivisionError):  # a part's error reaches the caller
        cpu_threads.run_parts(lambda i: 1 // i if i == 0 else i, 2)


def test_omp_num_threads_one_makes_the_budget_one():
    # PyTorch's default thread count follows OMP_NUM_THREADS; the launchers set it to 1 for
    # several workers a node. A fresh process: the budget is read at import.
    script = "import ember_tensor as et; print(et.get_num_threads())"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
    env.pop("OMP_NUM_THREADS")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) >= 1
