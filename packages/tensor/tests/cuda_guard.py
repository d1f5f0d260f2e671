"""`device_only()`: a context in which reading a CUDA tensor's values back to the host fails.

Ops that claim to run on the GPU are called inside it, so a test fails if the op quietly
copies its operands to the host, computes there and uploads the result (the round trip
that is correct but slow). Reading a single count that sizes the output (nonzero,
masked_select: PyTorch synchronises there too) goes through `allow_scalar_reads`.

`as_on_cuda(message)` is a CPU error message as PyTorch's CUDA build words it (a dtype
error names the CUDA kernel). `matches_the_cpu(call, args, what)` runs a call on the CPU
and on CUDA inside `device_only()`, its operands moved there with their strides
(`on_cuda`): the same result, or the same error word for word; it
is what a generic test taking the device as a parameter asserts for "cuda", the CPU
result being checked against the reference by the "cpu" parameter. `DEVICES` is that
parameter; `cpu_result(device, call, *args)` is a CPU test's call made generic: the CPU's
result for the test's own asserts, checked first against CUDA when `device` is "cuda". `run_on_simulated_devices(script, devices)` runs a script in a fresh interpreter on that
many simulated GPUs (the device count is fixed when CUDA first initialises).
`kernel_launches()` collects the names of the kernels the simulator launches inside a
block (tests marked `simulator_only`), for tests that count launches.
"""
import contextlib
import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ember_tensor as et

__all__ = ["DEVICES", "device_only", "as_on_cuda", "run_on_simulated_devices", "same_as_cpu", "matches_the_cpu",
           "on_cuda", "cpu_result", "kernel_launches", "simulator_only"]

# The device parameter of the generic tests: CUDA runs on Numba's simulator where no GPU is.
DEVICES = [pytest.param("cpu"),
           pytest.param("cuda", marks=pytest.mark.skipif(not et.cuda.is_available(),
                                                         reason="no CUDA and no simulator"))]


@contextlib.contextmanager
def device_only(allow_scalar_reads=False):
    """Fail any device-to-host copy made inside the block (of more than one element when
    `allow_scalar_reads`)."""
    from ember_tensor._backends.cuda import storage  # here, not at import: collecting tests needs no GPU

    original = storage.to_numpy

    def guarded(data):
        if allow_scalar_reads and data.size <= 1:
            return original(data)
        raise AssertionError(f"device-to-host copy of a {tuple(data.shape)} {data.dtype} array inside "
                             "device_only(): the op computed on the host")

    storage.to_numpy = guarded
    try:
        yield
    finally:
        storage.to_numpy = original


simulator_only = pytest.mark.skipif(not (et.cuda.is_available() and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"),
                                    reason="counts launches on Numba's CUDA simulator")


@contextlib.contextmanager
def kernel_launches():
    """The names of the CUDA kernels the simulator launches inside the block, in order."""
    from numba.cuda.simulator import kernel  # here, not at import: only the simulator has it

    names = []
    original = kernel.FakeCUDAKernel.__call__

    def recording(self, *args):
        if not self._device:  # the simulator's device functions are calls too
            names.append(self.fn.__name__)
        return original(self, *args)

    kernel.FakeCUDAKernel.__call__ = recording
    try:
        yield names
    finally:
        kernel.FakeCUDAKernel.__call__ = original


def run_on_simulated_devices(script, devices=2):
    """Run `script` (dedented) in a new Python on Numba's simulator presenting `devices`
    GPUs (EMBER_CUDASIM_DEVICES); assert it exits 0 and prints exactly "ok"."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", EMBER_CUDASIM_DEVICES=str(devices))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok", result.stdout[-3000:]


def as_on_cuda(message):
    """`message` (a CPU error) with the kernel of a `"..." not implemented for` dtype error
    renamed to its CUDA twin, as PyTorch's CUDA build raises it."""
    from ember_tensor._ops._kernel_names import CUDA_KERNEL_NAMES

    def rename(match):
        return f'"{CUDA_KERNEL_NAMES.get(match[1], match[1])}" not implemented for'

    return re.sub(r'^"(\w+)" not implemented for', rename, message)


def _host(t):
    return t.cpu().numpy() if t.dtype is not et.bfloat16 else t.cpu().float().numpy()


def same_as_cpu(cpu_result, cuda_result, tol=1e-6):
    """`cuda_result` (a tensor or tuple of them) is on cuda:0 with `cpu_result`'s dtype,
    shape and values (NaN == NaN; half types within their precision unless `tol` is 0:
    exact, as a selection or a copy is)."""
    pairs = zip(cpu_result, cuda_result) if isinstance(cpu_result, tuple) else [(cpu_result, cuda_result)]
    for c, g in pairs:
        assert g.device == et.device("cuda", 0)
        assert g.dtype == c.dtype
        assert g.shape == c.shape
        if c.dtype.is_floating_point or c.dtype.is_complex:
            rtol = {et.float16: 1e-3, et.bfloat16: 1e-2}.get(c.dtype, tol) if tol else 0
            np.testing.assert_allclose(_host(g), _host(c), rtol=rtol, atol=rtol, equal_nan=True)
        else:
            np.testing.assert_array_equal(_host(g), _host(c))


def on_cuda(t):
    """`t` copied to cuda:0 with its strides: a transposed or stepped view stays one, so
    that the CUDA kernels' strided paths run (`.cuda()` returns a contiguous copy).

    The span of storage the view reads is uploaded as it is and viewed alike on the
    device: no copy kernel runs (the simulator runs each as Python, thread by thread)."""
    if t.is_contiguous() or t.numel() == 0 or 0 in t.stride():  # (stride 0: expanded, copied dense)
        return t.cuda()
    span = 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    storage = et.as_strided(t, (span,), (1,), t.storage_offset()).cuda()
    return et.as_strided(storage, t.shape, t.stride(), 0)


def _on_cuda(values):
    return [on_cuda(v) if isinstance(v, et.Tensor) else v for v in values]


def _quietly(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def matches_the_cpu(call, args, what, reads_a_flag=False, tol=1e-5):
    """call(*args) on the CPU and on CUDA (inside device_only): the same result, or the
    same error word for word. A Python result, or an op that reads back one flag to raise
    (`reads_a_flag`), may read single elements."""
    try:
        expected = _quietly(call, *args)
    except Exception as error:  # an error case: CUDA must raise the same, word for word
        with pytest.raises(type(error)) as raised:  # (a dtype error names the CUDA kernel)
            _quietly(call, *_on_cuda(args))
        assert str(raised.value) == as_on_cuda(str(error)), what
        return
    cuda_args = _on_cuda(args)
    python_result = not isinstance(expected, (et.Tensor, tuple))
    # A Python result (allclose, equal) is read back: one element, as PyTorch does too.
    with device_only(allow_scalar_reads=python_result or reads_a_flag):
        got = _quietly(call, *cuda_args)
    if python_result:
        assert got == expected, what
        return
    try:
        same_as_cpu(expected, got, tol=tol)
    except AssertionError as failure:
        raise AssertionError(f"{what}: {failure}") from None


def cpu_result(device, call, *args, reads_a_flag=True, tol=1e-5):
    """call(*args) on the CPU tensors `args`, returned (or raised) for the test's own asserts
    against a reference; where `device` is "cuda", first `matches_the_cpu` (the same result
    or error on the device). A call that writes in place must clone: it runs on both.

    >>> cpu_result("cpu", lambda x: x + 1, et.tensor([1, 2])).tolist()
    [2, 3]
    """
    if device != "cpu":
        matches_the_cpu(call, args, getattr(call, "__name__", "call"), reads_a_flag=reads_a_flag, tol=tol)
    return call(*args)
