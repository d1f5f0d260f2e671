"""`ember_tensor.fusion.FusedElementwise(..., recycle=True)`: a new result takes the memory
of the program's previous result (1 MiB or more) once nothing holds that any more, with
the values of a new tensor; while anything holds it — the tensor, a view, its storage, a
NumPy array made from it — a new result gets new memory. (An autograd node holding it:
ember-compile's tests, a layer above.)"""
import gc

import numpy as np
import pytest

import ember_tensor as et
from ember_tensor import fusion

# relu(x0 * x1 + 0.5)
PROGRAM_STEPS = [("mul", (("in", 0), ("in", 1))), ("add", (("step", 0), 0.5)), ("relu", (("step", 1),))]
BIG = (512, 1024)   # 2 MiB of float32: kept
SMALL = (64, 64)    # 16 KiB: never kept


def _program():
    return fusion.FusedElementwise(PROGRAM_STEPS, 2)


def _inputs(shape=BIG, dtype=et.float32):
    et.manual_seed(0)
    return et.randn(shape, dtype=dtype), et.randn(shape, dtype=dtype)


@pytest.mark.parametrize("dtype", [et.float32, et.float64])
def test_a_dropped_result_gives_its_memory_to_the_next(dtype):
    program, (x, y) = _program(), _inputs(dtype=dtype)
    first = program(x, y, recycle=True)
    pointer = first.data_ptr()
    expected = first.clone()
    first.fill_(-1.0)   # the next result's values must not depend on what the memory held
    del first
    second = program(x, y, recycle=True)
    assert second.data_ptr() == pointer
    assert second._version == 0 and et.equal(second, expected)


# (name, hold: result -> what holds its memory, check: (holder, the result's values) ->
# whether the holder still sees those values)
HOLDERS = [
    ("tensor", lambda r: r, lambda h, v: et.equal(h, v)),
    ("view", lambda r: r[1:], lambda h, v: et.equal(h, v[1:])),
    ("numpy", lambda r: r.numpy(), lambda h, v: np.array_equal(h, v.numpy())),
    ("numpy view", lambda r: r.numpy()[::2], lambda h, v: np.array_equal(h, v.numpy()[::2])),
    # The storage alone (as a saved tensor's record or a serializer may keep it): it still
    # refers to the first result's memory.
    ("storage", lambda r: r.untyped_storage(), None),
]


@pytest.mark.parametrize("name, hold, check", HOLDERS, ids=[h[0] for h in HOLDERS])
def test_memory_something_holds_is_never_taken(name, hold, check):
    program, (x, y) = _program(), _inputs()
    first = program(x, y, recycle=True)
    pointer, values = first.data_ptr(), first.clone()
    holder = hold(first)
    del first
    gc.collect()
    second = program(x, y, recycle=True)
    assert second.data_ptr() != pointer and et.equal(second, values)
    second.fill_(-1.0)
    if name == "storage":
        assert holder.data_ptr() == pointer
    else:
        assert check(holder, values)


@pytest.mark.parametrize("case", ["small", "shape changes", "dtype changes", "without recycle"])
def test_a_new_result_gets_new_memory(case):
    program = _program()
    x, y = _inputs(SMALL if case == "small" else BIG)
    first = program(x, y, recycle=True)
    pointer = first.data_ptr()
    del first
    if case == "shape changes":
        x, y = _inputs((1024, 512))
    elif case == "dtype changes":
        x, y = _inputs(dtype=et.float64)
    second = program(x, y, recycle=case != "without recycle")
    assert second.shape == x.shape and second.dtype == x.dtype and et.equal(second, program(x, y))
    if case == "small":
        assert not program._spares   # nothing under 1 MiB is kept
    elif case == "without recycle":
        assert second.data_ptr() != pointer
    # (a shape or dtype change drops the spare; malloc may then hand out the same block)


def test_the_in_place_reuse_wins_over_recycling():
    program, (x, y) = _program(), _inputs()
    program(x, y, recycle=True)
    expected = program(x, y)
    result = program(x, y, reuse=0, recycle=True)
    assert result is x and et.equal(x, expected)


def test_a_spare_serves_only_its_own_device():
    # One program runs on any device: a CPU result's memory never takes a CUDA result.
    program, (x, y) = _program(), _inputs()
    program(x, y, recycle=True)
    assert len(program._spares) == 1
    result = program(x.to("cuda"), y.to("cuda"), recycle=True)
    assert result.device.type == "cuda" and et.equal(result.cpu(), program(x, y))
