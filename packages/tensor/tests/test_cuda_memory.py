"""CUDA memory: per-device statistics follow tensors, the caching allocator reuses freed
blocks (on their own stream only), out-of-memory errors say what was asked and held,
pinned memory and non-blocking copies, __cuda_array_interface__, the allocator as a valid
Numba EMM plugin, and counting without the plugin.

Runs on Numba's CUDA simulator; `simulator_only` tests use its hooks (a settable memory
capacity, its arrays).
"""
import numpy as np
import pytest

import ember_tensor as et

pytestmark = pytest.mark.skipif(not et.cuda.is_available(), reason="no CUDA and no simulator")

CUDA0 = et.device("cuda", 0)

# Tests that use hooks only the simulator has (a settable memory capacity, its arrays).
simulator_only = pytest.mark.skipif(
    not et.cuda.is_available() or "simulator" not in et.cuda.get_device_name().lower(),
    reason="uses a hook of Numba's CUDA simulator")


def test_memory_stats_follow_tensors():
    et.cuda.reset_peak_memory_stats()
    before = et.cuda.memory_allocated()
    x = et.empty(1000, device="cuda")
    assert et.cuda.memory_allocated() >= before + 4000
    assert et.cuda.max_memory_allocated() >= et.cuda.memory_allocated()
    del x
    assert et.cuda.memory_allocated() == before
    assert et.cuda.max_memory_allocated() >= before + 4000
    et.cuda.reset_peak_memory_stats()
    assert et.cuda.max_memory_allocated() == before


def test_caching_allocator_reuses_freed_blocks():
    et.cuda.empty_cache()
    base_alloc, base_reserved = et.cuda.memory_allocated(), et.cuda.memory_reserved()
    x = et.empty(1000, device="cuda")  # 4000 bytes, served as a 4096-byte block
    view = x[::2]
    del x
    assert et.cuda.memory_allocated() == base_alloc + 4096  # the view keeps the block
    del view
    assert et.cuda.memory_allocated() == base_alloc
    assert et.cuda.memory_reserved() == base_reserved + 4096  # cached, not given back
    assert et.cuda.memory_cached() == et.cuda.memory_reserved()
    hits = et.cuda.memory_stats()["cache_hits"]
    y = et.empty(1024, device="cuda")
    assert et.cuda.memory_stats()["cache_hits"] == hits + 1
    assert et.cuda.memory_reserved() == base_reserved + 4096
    assert et.cuda.max_memory_reserved() >= et.cuda.memory_reserved()
    del y
    et.cuda.empty_cache()
    assert et.cuda.memory_reserved() == et.cuda.memory_allocated()  # nothing cached any more
    assert "Allocated memory" in et.cuda.memory_summary()
    free, total = et.cuda.mem_get_info()
    assert 0 < free <= total


@simulator_only
def test_out_of_memory_error_says_what_was_asked_and_held(monkeypatch):
    from ember_tensor._backends.cuda import allocator as _cuda_alloc
    monkeypatch.setattr(_cuda_alloc, "SIM_CAPACITY", et.cuda.memory_reserved() + (1 << 20))
    keep = et.empty(1000, device="cuda")
    with pytest.raises(et.cuda.OutOfMemoryError,
                       match=r"^CUDA out of memory\. Tried to allocate 4\.00 MiB\. GPU 0 has a total "
                             r"capacity of .* Of the allocated memory .* is allocated by PyTorch"):
        et.empty(1 << 20, device="cuda")
    assert isinstance(et.cuda.OutOfMemoryError("x"), RuntimeError)
    assert et.cuda.memory_allocated() >= 4000  # `keep` is still held
    assert et.ones(2, device="cuda").sum().item() == 2.0  # and the device still works
    del keep


def test_pinned_memory_and_non_blocking_copies():
    x = et.arange(6.0).reshape(2, 3)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and p[1].is_pinned() and p.device == et.device("cpu")
    assert p.pin_memory() is p
    assert p.tolist() == x.tolist()
    s = et.cuda.Stream()
    with et.cuda.stream(s):
        g = p.cuda(non_blocking=True)
        h = et.empty(2, 3, device="cuda").copy_(p, non_blocking=True)
    s.synchronize()
    assert g.tolist() == h.tolist() == x.tolist()
    assert p.to("cuda", non_blocking=True).device == CUDA0
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        g.pin_memory()
    assert not g.is_pinned()


def test_cuda_array_interface_describes_device_memory():
    x = et.arange(6.0, device="cuda").reshape(2, 3)
    cai = x.__cuda_array_interface__
    assert cai == {"shape": (2, 3), "strides": None, "typestr": "<f4",
                   "data": (x.data_ptr(), False), "version": 2}
    t = x.t().__cuda_array_interface__
    assert t["shape"] == (3, 2) and t["strides"] == (4, 12) and t["data"][0] == x.data_ptr()
    assert x[1].__cuda_array_interface__["data"][0] == x.data_ptr() + 12
    assert not hasattr(et.ones(2), "__cuda_array_interface__")
    with pytest.raises(AttributeError, match="on non-CUDA tensor type: torch.FloatTensor"):
        et.ones(2).__cuda_array_interface__


def test_the_gpu_allocator_is_a_valid_numba_emm_plugin():
    # The plugin needs the real numba.cuda (not the simulator), which imports without a GPU:
    # check in a fresh process that Numba accepts it (set_memory_manager validates it).
    import os
    import subprocess
    import sys
    code = ("from numba import cuda\n"
            "from ember_tensor._backends.cuda import allocator as _cuda_alloc\n"
            "cls = _cuda_alloc.CachingMemoryManager\n"
            "cuda.set_memory_manager(cls)\n"
            "assert issubclass(cls, cuda.HostOnlyCUDAMemoryManager)\n"
            "assert cls(context=None).interface_version == 1\n"
            "print('accepted')\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "accepted"


def test_cached_blocks_are_reused_only_on_their_stream():
    et.cuda.empty_cache()
    side = et.cuda.Stream()
    with et.cuda.stream(side):
        x = et.empty(300, device="cuda")
    del x  # back to the side stream's cache
    hits = et.cuda.memory_stats()["cache_hits"]
    y = et.empty(300, device="cuda")  # default stream: must not take the side stream's block
    assert et.cuda.memory_stats()["cache_hits"] == hits
    with et.cuda.stream(side):
        z = et.empty(300, device="cuda")
    assert et.cuda.memory_stats()["cache_hits"] == hits + 1
    del y, z


@simulator_only
def test_without_the_allocator_plugin_allocations_are_still_counted(monkeypatch):
    # On a GPU where Numba's own allocator is in charge (EMBER_CUDA_ALLOCATOR=numba, or a
    # context made before ember's), ember counts its arrays: allocated == reserved.
    from ember_tensor._backends.cuda import arrays, runtime
    monkeypatch.setattr(arrays, "SIMULATOR", False)
    monkeypatch.setattr(runtime, "_emm_installed", False)
    before = (et.cuda.memory_allocated(), et.cuda.memory_reserved())
    arr = arrays.track(arrays._SimArray(np.empty(1000, np.float32)))
    assert et.cuda.memory_allocated() == before[0] + 4096
    assert et.cuda.memory_reserved() == before[1] + 4096
    del arr
    assert (et.cuda.memory_allocated(), et.cuda.memory_reserved()) == before
