"""`ember_tensor.fusion.FusedElementwise(..., reuse=i)`: the result is written into input
i's memory when it fits (contiguous, the result's shape and dtype), with the values of a
new tensor; otherwise a new tensor, input i untouched. CPU and CUDA (simulator)."""
import pytest

import ember_tensor as et
from ember_tensor import fusion

# relu(x0 * x1 + 0.5): x1 may broadcast.
PROGRAM = fusion.FusedElementwise([("mul", (("in", 0), ("in", 1))), ("add", (("step", 0), 0.5)),
                                   ("relu", (("step", 1),))], 2)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", [et.float32, et.float64])
@pytest.mark.parametrize("shape, shape_other", [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 4), (1, 4)), ((), ()),
                                                 ((512, 512), (512, 512)), ((512, 512), (512,))])
def test_reuse_writes_into_the_input_and_equals_a_new_tensor(device, dtype, shape, shape_other):
    # Same shapes: the flat in-place loop; broadcasting: the strided one; 512x512: split
    # over threads when there are several.
    if device == "cuda" and len(shape) == 2 and shape[0] > 3:
        pytest.skip("the simulator runs a thread per element in Python: the small cases cover CUDA")
    et.manual_seed(0)
    x, y = et.randn(shape, dtype=dtype).to(device), et.randn(shape_other, dtype=dtype).to(device)
    expected = PROGRAM(x, y)
    version = x._version
    result = PROGRAM(x, y, reuse=0)
    assert result is x and x._version == version + 1
    assert et.equal(result.cpu(), expected.cpu())


@pytest.mark.parametrize("case", ["broadcast enlarges", "strided", "dtype differs", "bool result"])
def test_reuse_falls_back_to_a_new_tensor(case):
    et.manual_seed(0)
    program = PROGRAM
    x, y = et.randn(3, 4), et.randn(3, 4)
    if case == "broadcast enlarges":
        x = et.randn(1, 4)
    elif case == "strided":
        x = et.randn(4, 3).t()
    elif case == "dtype differs":
        x, y = (et.randn(3, 4) > 0), et.randn(3, 4)
        program = fusion.FusedElementwise([("where", (("in", 0), ("in", 1), 0.0))], 2)
    else:
        program = fusion.FusedElementwise([("gt", (("in", 0), ("in", 1)))], 2)
    before = x.clone()
    result = program(x, y, reuse=0)
    assert result is not x and et.equal(x, before)
    assert et.equal(result, program(x, y))
