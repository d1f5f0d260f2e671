"""tools/gpu_run.py reads its own results right: the JUnit totals and failures, the copy
bandwidth of the ceilings table, and each target of the GPU issue marked met or not (no
GPU and no ember needed: the functions take the files and rows a run writes)."""
import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gpu_run():
    spec = importlib.util.spec_from_file_location("gpu_run", REPO / "tools" / "gpu_run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.test_ops" name="test_forward[add-float32-cuda]" time="0.5" />
<testcase classname="tests.test_ops" name="test_forward[remainder-float32-cuda]" time="1.5">
  <failure message="AssertionError: remainder, sample 'extremal'&#10;second line">trace</failure></testcase>
<testcase classname="tests.test_cuda_blas" name="test_stand_in" time="0.0">
  <skipped type="pytest.skip" message="simulator only" /></testcase>
<testcase classname="tests.test_cuda_blas" name="test_crash" time="0.0">
  <error message="worker 'gw2' crashed">boom</error></testcase>
</testsuite></testsuites>"""


def test_totals_count_each_outcome_and_name_the_failures(gpu_run, tmp_path):
    report = tmp_path / "junit-tensor.xml"
    report.write_text(JUNIT)
    totals, failures = gpu_run.test_totals([report])
    assert totals == {"tensor": (4, 1, 1, 1, 2.0)}
    assert failures == [
        "tensor: tests.test_ops::test_forward[remainder-float32-cuda] (failure) AssertionError: remainder, "
        "sample 'extremal'",
        "tensor: tests.test_cuda_blas::test_crash (error) worker 'gw2' crashed"]


def _row(name, ember, torch=None, work=0.0, unit=""):
    row = {"name": name, "work": work, "unit": unit, "ember": [ember, ember, ember]}
    if torch is not None:
        row["torch"] = [torch, torch, torch]
    return row


def test_copy_bandwidth_is_pytorchs_copy_else_embers(gpu_run):
    ceilings = {"rows": [_row("device-to-device copy 1 GiB f32", 2e-3, 1e-3, work=8e9, unit="B")]}
    assert gpu_run.copy_bandwidth(ceilings) == pytest.approx(8e12)
    del ceilings["rows"][0]["torch"]
    assert gpu_run.copy_bandwidth(ceilings) == pytest.approx(4e12)
    assert gpu_run.copy_bandwidth(None) == 0.0


def test_targets_are_marked_met_or_not_from_the_timed_rows(gpu_run):
    results = {
        "cuda_ops": {"rows": [
            _row("a + b 1e+08 f32", 1e-3, work=0.9e9 * 3, unit="B"),         # 2.7 TB/s of 3: 90%
            _row("exp 1e+08 f32", 1e-3, work=1e9, unit="B"),                  # 1 TB/s: 33%
            _row("matmul 4096x4096 f32", 1.05, 1.0),                          # 1.05 <= 1.1
            _row("MLP 784-512-512-10 SGD step, batch 64", 3.0, 1.0),           # 3.0 > 2.0
            {"name": "sort 1e+07 (one row)", "error": "RuntimeError: boom"}]},
        # The launch counts reuse a training step's name: they must not hide its times.
        "cuda_launches": {"rows": [{"name": "MLP 784-512-512-10 SGD step, batch 64", "ember_kernels": 34}]},
    }
    lines = "\n".join(gpu_run.target_lines(results, 3e12))
    assert "a + b 1e+08 f32: 90% of the copy bandwidth (target >= 80%): met" in lines
    assert "exp 1e+08 f32: 33% of the copy bandwidth (target >= 80%): NOT met" in lines
    assert "matmul 4096x4096 f32: ember/torch 1.05 (target <= 1.1): met" in lines
    assert "MLP 784-512-512-10 SGD step, batch 64: ember/torch 3.00 (target <= 2.0): NOT met" in lines
    assert "sort 1e+07 (one row): not measured (RuntimeError: boom)" in lines
    assert "softmax last dim: not measured" in lines


def test_node_ids_are_grouped_by_package(gpu_run, tmp_path):
    listing = tmp_path / "rerun.txt"
    listing.write_text("packages/tensor/tests/test_ops.py::test_forward[add-float32-cuda]\n\n"
                       "packages/optim/tests/test_cuda_fused.py::test_half[dtype1]\n"
                       "packages/tensor/tests/test_cuda_blas.py\n")
    assert gpu_run._test_files(False, listing) == {
        "tensor": ["packages/tensor/tests/test_ops.py::test_forward[add-float32-cuda]",
                   "packages/tensor/tests/test_cuda_blas.py"],
        "optim": ["packages/optim/tests/test_cuda_fused.py::test_half[dtype1]"]}


def test_the_default_targets_are_the_cuda_test_files(gpu_run):
    by_package = gpu_run._test_files(False)
    files = [f for fs in by_package.values() for f in fs]
    assert "packages/tensor/tests/test_cuda_blas.py" in files
    assert not any(f.endswith("test_cuda_benchmarks.py") for f in files)  # the simulator's smoke run
    assert set(by_package) >= {"tensor", "nn", "optim", "autograd"}
