"""frombuffer: a 1-d tensor over a buffer's bytes, sharing its memory, with PyTorch's
checks and messages."""
import array
import warnings

import numpy as np
import pytest

import ember_tensor as et


def test_shares_memory_with_the_buffer():
    raw = bytearray(np.arange(4, dtype=np.float32).tobytes())
    t = et.frombuffer(raw, dtype=et.float32)
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0] and t.dtype == et.float32
    t[1] = 7.0
    assert np.frombuffer(raw, dtype=np.float32)[1] == 7.0


def test_count_offset_and_dtypes():
    raw = array.array("h", [1, 2, 3, 4])
    assert et.frombuffer(raw, dtype=et.int16, count=2, offset=2).tolist() == [2, 3]
    bf = et.frombuffer(bytearray(et.tensor([1.5, -2.0], dtype=et.bfloat16).numpy().tobytes()), dtype=et.bfloat16)
    assert bf.tolist() == [1.5, -2.0]
    c = et.frombuffer(bytearray(np.array([1 + 2j], dtype=np.complex64).tobytes()), dtype=et.complex64)
    assert c.tolist() == [1 + 2j]
    assert et.frombuffer(bytearray(8), dtype=et.float32, requires_grad=True).requires_grad


@pytest.mark.parametrize("buffer, kwargs", [
    (b"", {}),
    (b"abc", {}),
    (bytearray(8), {"count": 3}),
    (bytearray(8), {"offset": 9}),
    (bytearray(8), {"offset": -1}),
])
def test_errors_are_pytorchs(buffer, kwargs):
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError) as theirs:
        torch.frombuffer(buffer, dtype=torch.float32, **kwargs)
    with pytest.raises(ValueError) as ours:
        et.frombuffer(buffer, dtype=et.float32, **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_read_only_bytes_warn_and_refuse_writes():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = et.frombuffer(b"\x00\x00\x80?", dtype=et.float32)
    assert t.tolist() == [1.0] and "not writable" in str(caught[0].message)
    with pytest.raises(ValueError):
        t[0] = 2.0
