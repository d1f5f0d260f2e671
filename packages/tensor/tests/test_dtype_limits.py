"""`finfo` and `iinfo`: PyTorch's values (copied from PyTorch 2.13), reprs and errors."""
import pytest

import ember_tensor as et

FINFO = {  # dtype: (bits, eps, max, tiny, resolution)
    et.float16: (16, 0.0009765625, 65504.0, 6.103515625e-05, 0.001),
    et.bfloat16: (16, 0.0078125, 3.3895313892515355e+38, 1.1754943508222875e-38, 0.01),
    et.float32: (32, 1.1920928955078125e-07, 3.4028234663852886e+38, 1.1754943508222875e-38, 1e-06),
    et.float64: (64, 2.220446049250313e-16, 1.7976931348623157e+308, 2.2250738585072014e-308, 1e-15),
}


@pytest.mark.parametrize("dtype", list(FINFO), ids=str)
def test_finfo_values(dtype):
    info = et.finfo(dtype)
    bits, eps, big, tiny, resolution = FINFO[dtype]
    assert (info.bits, info.eps, info.max, info.min, info.tiny, info.smallest_normal, info.resolution) == \
        (bits, eps, big, -big, tiny, tiny, resolution)
    assert info.dtype == dtype.name and isinstance(info.eps, float)


def test_finfo_repr_and_default():
    assert repr(et.finfo(et.bfloat16)) == ("finfo(resolution=0.01, min=-3.38953e+38, max=3.38953e+38, "
                                           "eps=0.0078125, smallest_normal=1.17549e-38, tiny=1.17549e-38, "
                                           "dtype=bfloat16)")
    assert et.finfo() == et.finfo(et.get_default_dtype())


@pytest.mark.parametrize("dtype, bits, low, high", [
    (et.int8, 8, -128, 127), (et.uint8, 8, 0, 255), (et.int16, 16, -32768, 32767),
    (et.int32, 32, -2 ** 31, 2 ** 31 - 1), (et.int64, 64, -2 ** 63, 2 ** 63 - 1)], ids=str)
def test_iinfo_values(dtype, bits, low, high):
    info = et.iinfo(dtype)
    assert (info.bits, info.min, info.max, info.dtype) == (bits, low, high, dtype.name)
    assert repr(info) == f"iinfo(min={low}, max={high}, dtype={dtype.name})"


def test_errors_as_pytorch():
    with pytest.raises(TypeError, match=r"^torch.finfo\(\) requires a floating point input type. Use torch.iinfo"):
        et.finfo(et.int32)
    with pytest.raises(TypeError, match=r"^torch.iinfo\(\) requires an integer input type. Use torch.finfo"):
        et.iinfo(et.float32)
    with pytest.raises(TypeError, match="^torch.bool is not supported by torch.iinfo$"):
        et.iinfo(et.bool)
    with pytest.raises(TypeError, match=r"^finfo\(\): argument 'type' \(position 1\) must be torch.dtype, not str$"):
        et.finfo("float32")


def test_constants():
    import math

    assert (et.pi, et.e, et.inf) == (math.pi, math.e, math.inf) and math.isnan(et.nan)
    assert et.newaxis is None and et.ones(2)[:, et.newaxis].shape == (2, 1)
