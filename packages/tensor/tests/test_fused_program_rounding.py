"""A fused program's CUDA code rounds as eager ember's separate kernels do: NVVM must not
contract a product and the add or subtract using it into one fused multiply-add. Checked in
the PTX NVVM makes for sm_90 (no GPU needed); on an H200 every fused ``x * w + b`` of a
reduction, softmax or layer norm prologue differed from eager in the last bit before."""
import textwrap

import pytest
from cuda_ptx_check import run_ptx_script

_PTX = textwrap.dedent("""
    import ember_tensor as et
    from ember_tensor.fusion import FusedElementwise
    from ember_tensor._backends.cuda import custom
    from ember_tensor._backends.cuda.kernels.loops import scalar_function

    PROGRAMS = {
        "x * w + b": [("mul", (("in", 0), ("in", 1))), ("add", (("step", 0), ("in", 2)))],
        "x ** 2 + b": [("square", (("in", 0),)), ("add", (("step", 0), ("in", 2)))],
    }

    def ptx_of(fn, dtype):
        el = types.float32 if dtype is et.float32 else types.float64
        f = cuda.jit(device=True)(fn)  # as the elementwise kernels call a program

        def kernel(a, b, c, out):
            out[0] = f(a[0], b[0], c[0])
        return cuda.compile_ptx(kernel, (el[::1],) * 4, cc=(9, 0))[0]

    for label, steps in PROGRAMS.items():
        program = FusedElementwise(steps, 3, name="p")
        for dtype in (et.float32, et.float64):
            name = program.kernel_name(dtype) + "_rounding"
            fn = custom._program_function(name, program.source(dtype), program.name, program._used, dtype.np)
            print(label, "|", dtype, "fused", "fma" in ptx_of(fn, dtype))
            # The control: the same program over the plain scalar functions contracts.
            namespace = {op: cuda.jit(device=True)(scalar_function(op)) for op in program._used}
            namespace["T"] = dtype.np.type
            exec(program.source(dtype), namespace)
            print(label, "|", dtype, "plain", "fma" in ptx_of(namespace[program.name], dtype))
    print("PTX OK")
""")


def _run():
    done = run_ptx_script(_PTX)
    if done is None:
        pytest.skip("no NVVM to compile PTX with")
    assert done.returncode == 0 and "PTX OK" in done.stdout, done.stderr[-2000:]
    return [line.rsplit(" ", 2) for line in done.stdout.splitlines() if " | " in line]


def test_fused_products_are_not_contracted_into_fmas():
    results = _run()
    assert len(results) == 8
    for case, kind, has_fma in results:
        # A fused program never contracts; the control (plain products) does, so the check
        # can tell the two apart.
        assert has_fma == ("True" if kind == "plain" else "False"), (case, kind)
