"""Forward results at the edges where PyTorch has a convention (issue 21): NaN, signed
zeros, empty and 0-d tensors. Expected values are PyTorch 2.13's, written out literally."""
import math

import ember_tensor as E

nan, inf = math.nan, math.inf


def test_relu_keeps_nan_and_minus_zero_and_gives_positive_zero_for_negatives():
    # PyTorch's clamp_min(x, 0): -inf and -1 give +0; NaN and -0. pass through.
    for dtype in (E.float64, E.float32, E.float16, E.bfloat16):
        out = E.tensor([nan, -inf, -1.0, -0.0, 2.0], dtype=dtype).relu()
        values = out.tolist()
        assert math.isnan(values[0]) and values[1:] == [0.0, 0.0, 0.0, 2.0]
        assert [math.copysign(1, v) for v in values[1:]] == [1, 1, -1, 1]
    assert E.tensor([-3, 2]).relu().tolist() == [0, 2]
    inplace = E.tensor([-1.0, nan])
    inplace.relu_()
    assert str(inplace) == "tensor([0., nan])"
    assert E.tensor(-2.0).relu().item() == 0.0
