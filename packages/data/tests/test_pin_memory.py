"""DataLoader(pin_memory=True): batches come out in pinned host memory when a CUDA device
(here Numba's simulator, in a fresh interpreter) is available, and non_blocking copies of
them reach the device with the right values."""
import os
import subprocess
import sys
import textwrap
from collections import namedtuple

import ember_tensor as et
from ember_data._pin_memory import pin_memory

SCRIPT = textwrap.dedent("""
    import warnings
    from collections import namedtuple
    import ember_tensor as torch
    from ember_data import DataLoader, TensorDataset

    assert torch.cuda.is_available()
    x, y = torch.arange(40.0).reshape(10, 4), torch.arange(10)
    for workers in (0, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "no accelerator" warning with a device
            loader = DataLoader(TensorDataset(x, y), batch_size=4, pin_memory=True, num_workers=workers)
        batches = list(loader)
        assert len(batches) == 3
        for i, (bx, by) in enumerate(batches):
            assert bx.is_pinned() and by.is_pinned(), workers
            gx = bx.cuda(non_blocking=True)
            torch.cuda.current_stream().synchronize()
            assert gx.device.type == "cuda" and gx.tolist() == x[4 * i:4 * i + 4].tolist()
    plain = next(iter(DataLoader(TensorDataset(x, y), batch_size=4)))
    assert not plain[0].is_pinned()

    Pair = namedtuple("Pair", "image label")
    batch = next(iter(DataLoader([{"a": torch.ones(2), "p": Pair(torch.zeros(1), 3)}] * 4,
                                 batch_size=2, pin_memory=True)))
    assert batch["a"].is_pinned() and isinstance(batch["p"], Pair) and batch["p"].image.is_pinned()
    print("ok")
""")


def test_pinned_batches_on_a_cuda_device():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


class _Custom:
    def __init__(self):
        self.pinned = False

    def pin_memory(self):
        self.pinned = True
        return self


def test_pin_memory_walks_batches_like_pytorch(monkeypatch):
    # Tensors are asked to pin themselves: record the calls instead of needing a device.
    calls = []
    monkeypatch.setattr(et.Tensor, "pin_memory", lambda self, device=None: calls.append(self) or self)
    Pair = namedtuple("Pair", "a b")
    t = et.ones(2)
    out = pin_memory({"x": (t, "label", 3), "pair": Pair(t, [t, b"raw"]), "custom": _Custom()})
    assert out["x"] == [t, "label", 3]  # a plain tuple comes back as a list, as in PyTorch
    assert isinstance(out["pair"], Pair) and out["pair"].b[1] == b"raw"
    assert out["custom"].pinned
    assert len(calls) == 3
