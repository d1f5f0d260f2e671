"""`device_only()`: a context in which reading a CUDA tensor's values back to the host fails.

Ops that claim to run on the GPU are called inside it, so a test fails if the op quietly
copies its operands to the host, computes there and uploads the result (the round trip
that is correct but slow). Reading a single count that sizes the output (nonzero,
masked_select: PyTorch synchronises there too) goes through `allow_scalar_reads`.

`as_on_cuda(message)` is a CPU error message as PyTorch's CUDA build words it (a dtype
error names the CUDA kernel). `run_on_simulated_devices(script, devices)` runs a script in a fresh interpreter on that
many simulated GPUs (the device count is fixed when CUDA first initialises).
"""
import contextlib
import os
import re
import subprocess
import sys
import textwrap

__all__ = ["device_only", "as_on_cuda", "run_on_simulated_devices"]


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
