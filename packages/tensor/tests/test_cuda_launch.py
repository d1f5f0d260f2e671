"""The one launch path of the CUDA backend: `_backends.cuda.launch.configured` (cached launchers on a GPU,
keyed by grid, block, stream and dynamic shared memory; never cached under the simulator)
and `_backends.cuda.launch.launch_grid` (current stream, CUDA_LAUNCH_BLOCKING honoured).

The caching is a GPU path: it is checked with a stand-in kernel that records how often
it is configured, with `_backends.cuda.launch.SIMULATOR` switched off for the test.
"""
import numpy as np
import pytest

import ember_tensor as et

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")


class _RecordingKernel:
    """Stands in for a dispatcher: `kernel[config]` records the config, returns a launcher."""

    def __init__(self):
        self.configs = []
        self.launches = []

    def __getitem__(self, config):
        self.configs.append(config)
        return lambda *args: self.launches.append((config, args))


@pytest.fixture
def cuda_backend(monkeypatch):
    from ember_tensor._backends.cuda import launch
    monkeypatch.setattr(launch, "_launchers", {})
    return launch


# (first launch, second launch, configurations made): equal keys share one launcher.
CACHE_CASES = [
    ("same launch twice", (2, 32, None, 0), (2, 32, None, 0), 1),
    ("another grid", (2, 32, None, 0), (3, 32, None, 0), 2),
    ("another block", (2, 32, None, 0), (2, 64, None, 0), 2),
    ("another shared size", (2, 32, None, 256), (2, 32, None, 512), 2),
    ("no shared vs shared", (2, 32, None, 0), (2, 32, None, 256), 2),
    ("2-d grid", ((2, 3), 32, None, 0), ((2, 3), 32, None, 0), 1),
]


@pytest.mark.parametrize("first, second, configurations", [c[1:] for c in CACHE_CASES],
                         ids=[c[0] for c in CACHE_CASES])
def test_gpu_launchers_are_cached_per_grid_block_stream_and_shared_memory(cuda_backend, monkeypatch, first,
                                                                          second, configurations):
    monkeypatch.setattr(cuda_backend, "SIMULATOR", False)
    kernel = _RecordingKernel()
    cuda_backend.configured(kernel, *first)(1)
    cuda_backend.configured(kernel, *second)(2)
    assert len(kernel.configs) == configurations
    assert kernel.configs[0] == first  # (grid, block, stream, shared), as numba takes it
    assert [args for _, args in kernel.launches] == [(1,), (2,)]


def test_the_simulator_configures_every_launch_afresh(cuda_backend, monkeypatch):
    # There kernel[...] mutates and returns the kernel itself: a cache would alias shapes.
    monkeypatch.setattr(cuda_backend, "SIMULATOR", True)
    kernel = _RecordingKernel()
    cuda_backend.configured(kernel, 1, 4, 0)(1)
    cuda_backend.configured(kernel, 1, 4, 0)(2)
    assert kernel.configs == [(1, 4, 0, 0), (1, 4, 0, 0)]
    assert cuda_backend._launchers == {}


@pytest.mark.parametrize("blocking, waits", [(False, 0), (True, 1)])
def test_launch_grid_runs_on_the_current_stream_and_waits_only_when_launch_blocking(cuda_backend, monkeypatch,
                                                                                   blocking, waits):
    from numba import cuda
    synchronised = []
    monkeypatch.setattr(cuda_backend, "LAUNCH_BLOCKING", blocking)
    monkeypatch.setattr(cuda, "synchronize", lambda: synchronised.append(1))
    kernel = _RecordingKernel()
    side = et.cuda.Stream()
    with et.cuda.stream(side):
        cuda_backend.launch_grid(kernel, (2, 1), 8, "x", shared=64)
    (grid, block, stream, shared), = kernel.configs
    assert (grid, block, shared) == ((2, 1), 8, 64)
    assert stream is side._numba
    assert kernel.launches == [((grid, block, stream, shared), ("x",))]
    assert len(synchronised) == waits


def test_a_row_kernel_with_dynamic_shared_memory_still_matches_the_cpu():
    # softmax rows take cuda/rows.py's launch (one block per row, a float64 of dynamic shared
    # memory per thread): the path that used to keep its own cache.
    x = et.tensor(np.arange(24, dtype=np.float32).reshape(4, 6) / 7)
    got = et.softmax(x.cuda()[:, 1:], -1).cpu().numpy()
    np.testing.assert_allclose(got, et.softmax(x[:, 1:], -1).numpy(), rtol=1e-6)
