"""Test setup: CUDA code runs on Numba's CUDA simulator unless a real GPU is asked for.

numba.cuda reads NUMBA_ENABLE_CUDASIM when it is first imported, so it is set here,
before any test imports it. Set NUMBA_ENABLE_CUDASIM=0 to run the CUDA tests on a real
GPU; tests marked `gpu` run only then.
"""
import os
import sys

import pytest

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
if "numba" in sys.modules:  # numba read its config at import: make it see the variable
    from numba.core import config as _numba_config
    _numba_config.reload_config()


def _real_gpu():
    if os.environ["NUMBA_ENABLE_CUDASIM"] not in ("", "0"):
        return False
    import ember_tensor
    return ember_tensor.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if any(item.get_closest_marker("gpu") for item in items) and not _real_gpu():
        skip = pytest.mark.skip(reason="needs a real CUDA GPU (run with NUMBA_ENABLE_CUDASIM=0 on one)")
        for item in items:
            if item.get_closest_marker("gpu"):
                item.add_marker(skip)


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def budget(request):
    """ember's CPU thread budget set to 1 (one run of work) and 2 (work split over threads)."""
    import ember_tensor as et
    before = et.get_num_threads()
    et.set_num_threads(request.param)
    yield request.param
    et.set_num_threads(before)
