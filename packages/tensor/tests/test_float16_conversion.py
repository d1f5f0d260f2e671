"""float32 <-> float16 on the CPU (`_backends/cpu/kernels/half.py`, taken by `to`, `copy_`
and the ops' casts for large contiguous arrays): bit for bit NumPy's casts (to nearest,
ties to even, subnormals, overflow to inf, -0, NaN payloads as NumPy keeps them) on every
float16 bit pattern, on the float32 neighbours of every float16 (ties and their next
values), on random float32 bit patterns and on edge values, above and below the loops'
size threshold and on strided views."""
import numpy as np
import pytest

import ember_tensor as et

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 65504.0, 65519.99, 65520.0, -65520.0, 1e6,
                  6.1035156e-05, 6.0975552e-05, 5.9604645e-08, 2.9802322e-08, 2.9802326e-08, 1e-45, -1e-45,
                  1.0 + 2**-11, 1.0 + 3 * 2**-11, 1.0 + 2**-11 + 2**-20], np.float32)
SIGNALLING = np.array([0x7F800001, 0xFF800100, 0x7FA00000, 0x7F802000, 0x7FC00000], np.uint32)


def _float32_values(seed=0):
    """Random float32 bit patterns, every float16 widened and its neighbours, the edges."""
    every_half = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
    near = np.concatenate([every_half.astype(np.int64) + d for d in (-1, 0, 1, 0xFFF, 0x1000, 0x1001)])
    near = (near & 0xFFFFFFFF).astype(np.uint32)
    random = np.random.default_rng(seed).integers(0, 2**32, 50_000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([random, near, EDGES.view(np.uint32), SIGNALLING]).view(np.float32)


def _to_half(x):
    with np.errstate(all="ignore"):
        return x.astype(np.float16).view(np.uint16)


@pytest.mark.parametrize("n", [None, 300], ids=["large", "small"])  # the loops start at 16384
@pytest.mark.parametrize("how", ["to", "half", "copy_"])
def test_float32_to_float16_is_numpys_bit_for_bit(n, how):
    x = _float32_values()
    if n is not None:
        x = np.concatenate([x[:n], EDGES])
    t = et.from_numpy(x.copy())
    if how == "to":
        out = t.to(et.float16)
    elif how == "half":
        out = t.half()
    else:
        out = et.empty(t.shape, dtype=et.float16)
        out.copy_(t)
    np.testing.assert_array_equal(out.numpy().view(np.uint16), _to_half(x))


@pytest.mark.parametrize("how", ["to", "float", "copy_"])
def test_float16_to_float32_is_numpys_bit_for_bit(how):
    bits = np.concatenate([np.arange(2**16, dtype=np.uint16)] * 2)  # every pattern, twice (above the threshold)
    h = bits.view(np.float16)
    t = et.from_numpy(h.copy())
    if how == "to":
        out = t.to(et.float32)
    elif how == "float":
        out = t.float()
    else:
        out = et.empty(t.shape, dtype=et.float32)
        out.copy_(t)
    np.testing.assert_array_equal(out.numpy().view(np.uint32), h.astype(np.float32).view(np.uint32))


def test_strided_source_and_destination():
    x = _float32_values()[:40_000].reshape(-1, 4)
    t = et.from_numpy(x.copy()).t()
    np.testing.assert_array_equal(t.half().numpy().view(np.uint16), _to_half(x.T))
    out = et.empty(x.shape, dtype=et.float16).t()
    out.copy_(t)
    np.testing.assert_array_equal(out.numpy().view(np.uint16), _to_half(x.T))
    back = et.from_numpy(x.astype(np.float16)).t().float()
    np.testing.assert_array_equal(back.numpy().view(np.uint32), x.T.astype(np.float16).astype(np.float32).view(np.uint32))


def test_round_trip_against_pytorch():
    torch = pytest.importorskip("torch")
    x = _float32_values()
    finite = x[np.isfinite(x)]  # PyTorch quiets NaN payloads (0x7e00...); NumPy and ember keep them
    ours = et.from_numpy(finite.copy()).half()
    theirs = torch.from_numpy(finite.copy()).half()
    np.testing.assert_array_equal(ours.numpy().view(np.uint16), theirs.numpy().view(np.uint16))
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())
