"""``torch.accelerator``: CUDA (a GPU or Numba's simulator) is ember's one accelerator;
without it the answers and errors are PyTorch's on a machine with none."""
import subprocess
import sys
import textwrap

import pytest

import ember_tensor as et
from ember_tensor import accelerator

needs_cuda = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


@needs_cuda
def test_with_cuda():
    assert accelerator.is_available()
    assert accelerator.current_accelerator() == et.device("cuda")
    assert accelerator.device_count() == et.cuda.device_count()
    assert accelerator.current_device_index() == et.cuda.current_device()
    with accelerator.device_index(0):
        accelerator.synchronize()
        accelerator.synchronize("cuda:0")
    free, total = accelerator.get_memory_info()
    assert 0 <= free <= total
    assert accelerator.memory_allocated() >= 0 and et.float32 in accelerator.get_device_capability()["supported_dtypes"]
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        accelerator.synchronize("cpu")


def test_without_an_accelerator():
    # A fresh interpreter without the simulator: this machine has no GPU (else: skip).
    script = textwrap.dedent("""
        import ember_tensor as et
        from ember_tensor import accelerator
        if et.cuda.is_available():
            print("has a GPU")
        else:
            assert accelerator.current_accelerator() is None and not accelerator.is_available()
            assert accelerator.device_count() == 0
            accelerator.empty_cache()
            for call in (accelerator.current_device_index, accelerator.synchronize,
                         lambda: accelerator.set_device_index(0)):
                try:
                    call()
                except RuntimeError as error:
                    assert str(error) == "Cannot access accelerator device when none is available.", error
                else:
                    raise AssertionError("no error")
            print("ok")
    """)
    env = {k: v for k, v in __import__("os").environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    if result.stdout.strip() == "has a GPU":
        pytest.skip("this machine has a GPU")
    assert result.stdout.strip() == "ok", result.stderr
