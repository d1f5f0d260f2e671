"""A fused elementwise program's CUDA kernels live in a generated module file in ember's
kernel cache directory, as ``cache=True`` kernels (`_backends.cuda.fused_elementwise`), so
numba-cuda caches their compiled code on disk: a second process does not compile them
again. The simulator runs the module's kernels (their results are the CPU's); NVVM
compiles them for sm_90 without a GPU, products uncontracted (eager's rounding). The disk
cache itself needs a GPU to be observed: numba-cuda's simulator compiles nothing."""
import sys
import textwrap

import pytest
from cuda_ptx_check import run_ptx_script

import ember_tensor as et
from ember_tensor import fusion
from ember_tensor._backends import codegen

# x0 * x1 + x2, then relu: a product an add reads (NVVM would contract it), and a branch.
STEPS = [("mul", (("in", 0), ("in", 1))), ("add", (("step", 0), ("in", 2))), ("relu", (("step", 1),))]


@pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")
@pytest.mark.parametrize("dtype", [et.float32, et.float64])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_the_kernels_come_from_a_cached_module_file_and_match_the_cpu(dtype, layout):
    program = fusion.FusedElementwise(STEPS, 3)
    et.manual_seed(0)
    x, w, b = (et.randn(6, 5, dtype=dtype) for _ in range(3))
    if layout == "strided":
        x = x.t()
        w, b = w.t(), b.t()[0]   # a transposed operand and a broadcast strided row
    expected = program(x, w, b)
    got = program(x.to("cuda"), w.to("cuda"), b.to("cuda"))
    assert got.device.type == "cuda" and et.equal(got.cpu(), expected)
    module = sys.modules[program.kernel_name(dtype) + "_cuda"]
    assert module.__file__.startswith(codegen.cache_root())
    source = open(module.__file__).read()
    for kinds in ("ccc", "sss"):
        assert f"@cuda.jit(cache=True)\ndef {kinds}(" in source


_PTX = textwrap.dedent("""
    import ember_tensor as et
    from ember_tensor.fusion import FusedElementwise
    from ember_tensor._backends.cuda.fused_elementwise import FusedKernels

    STEPS = [("mul", (("in", 0), ("in", 1))), ("add", (("step", 0), ("in", 2))), ("relu", (("step", 1),))]
    program = FusedElementwise(STEPS, 3)
    for dtype in (et.float32, et.float64):
        el = types.float32 if dtype is et.float32 else types.float64
        kernels = FusedKernels(program.kernel_name(dtype) + "_ptx_check", program.source(dtype), program.name,
                               program._used, dtype.np, 3)
        for kinds, operand in (("ccc", el[::1]), ("sss", el[:, :, :, :])):
            ptx = cuda.compile_ptx(kernels.kernel(kinds).py_func, (operand,) * 4, cc=(9, 0))[0]
            print(dtype, kinds, "|", "fma" in ptx)
    print("PTX OK")
""")


def test_the_module_kernels_compile_for_a_gpu_with_uncontracted_products():
    done = run_ptx_script(_PTX)
    if done is None:
        pytest.skip("no NVVM to compile PTX with")
    assert done.returncode == 0 and "PTX OK" in done.stdout, done.stderr[-2000:]
    results = [line.split(" | ") for line in done.stdout.splitlines() if " | " in line]
    assert len(results) == 4 and all(has_fma == "False" for _, has_fma in results), results
