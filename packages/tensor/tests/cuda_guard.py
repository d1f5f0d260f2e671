"""`device_only()`: a context in which reading a CUDA tensor's values back to the host fails.

Ops that claim to run on the GPU are called inside it, so a test fails if the op quietly
copies its operands to the host, computes there and uploads the result (the round trip
that is correct but slow). Reading a single count that sizes the output (nonzero,
masked_select: PyTorch synchronises there too) goes through `allow_scalar_reads`.

`run_on_simulated_devices(script, devices)` runs a script in a fresh interpreter on that
many simulated GPUs (the device count is fixed when CUDA first initialises).
"""
import contextlib
import os
import subprocess
import sys
import textwrap

__all__ = ["device_only", "run_on_simulated_devices"]


@contextlib.contextmanager
def device_only(allow_scalar_reads=False):
    """Fail any device-to-host copy made inside the block (of more than one element when
    `allow_scalar_reads`)."""
    from ember_tensor import _cuda  # here, not at import: collecting tests needs no GPU

    original = _cuda.to_numpy

    def guarded(data):
        if allow_scalar_reads and data.size <= 1:
            return original(data)
        raise AssertionError(f"device-to-host copy of a {tuple(data.shape)} {data.dtype} array inside "
                             "device_only(): the op computed on the host")

    _cuda.to_numpy = guarded
    try:
        yield
    finally:
        _cuda.to_numpy = original


def run_on_simulated_devices(script, devices=2):
    """Run `script` (dedented) in a new Python on Numba's simulator presenting `devices`
    GPUs (EMBER_CUDASIM_DEVICES); assert it exits 0 and prints exactly "ok"."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", EMBER_CUDASIM_DEVICES=str(devices))
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                            text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok", result.stdout[-3000:]
