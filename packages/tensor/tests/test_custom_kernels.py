"""ember.kernel, reduce_kernel and raw_kernel: values against NumPy, broadcasting, dtypes,
out=, layouts, errors; CUDA parity under Numba's simulator (in a subprocess, which needs
NUMBA_ENABLE_CUDASIM set before numba.cuda loads). Gradients: ember-autograd's tests."""
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember_tensor as et


@et.kernel.helper
def _sigmoid(x):
    return 1 / (1 + math.exp(-x))


@et.kernel
def swish(x):
    return x * _sigmoid(x)


@et.kernel
def axpy(a, x, y):
    return a * x + y


@et.kernel
def clipped_step(x, limit):
    if x > limit:
        return limit
    return x


@et.kernel
def above(x, y):
    return x > y


def _swish_np(x):
    return x / (1 + np.exp(-x))


@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16, et.bfloat16])
def test_float_kernel_matches_numpy_and_keeps_dtype(dtype):
    x = et.linspace(-4, 4, 9, dtype=dtype)
    got = swish(x)
    assert got.dtype is dtype and got.shape == (9,)
    expected = _swish_np(x.to(et.float64).numpy())
    np.testing.assert_allclose(got.to(et.float64).numpy(), expected, rtol=1e-2 if dtype in (et.float16, et.bfloat16)
                               else 1e-6, atol=1e-3)


def test_integer_input_to_float_function_gives_default_float():
    # Like torch.sigmoid of an int tensor.
    got = swish(et.tensor([0, 1, 2]))
    assert got.dtype is et.float32
    np.testing.assert_allclose(got.numpy(), _swish_np(np.array([0.0, 1.0, 2.0])), rtol=1e-6)


def test_integer_arithmetic_stays_integer_and_comparisons_give_bool():
    got = axpy(2, et.tensor([1, 2, 3]), et.tensor([10, 20, 30]))
    assert got.dtype is et.int64 and got.tolist() == [12, 24, 36]
    mask = above(et.tensor([1.0, 5.0]), 2.0)
    assert mask.dtype is et.bool and mask.tolist() == [False, True]


def test_broadcasting_numbers_and_promotion():
    a = et.arange(3, dtype=et.float32).reshape(3, 1)
    b = et.ones(4, dtype=et.float64)
    got = axpy(0.5, a, b)  # the Python number does not up-cast; float64 tensor does
    assert got.dtype is et.float64 and got.shape == (3, 4)
    np.testing.assert_allclose(got.numpy(), 0.5 * a.numpy().astype(np.float64) + b.numpy())
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\)"):
        clipped_step(et.ones(3), et.ones(4))


@pytest.mark.parametrize("layout", ["transposed", "expanded", "sliced", "0-d"])
def test_non_contiguous_and_0d_inputs(layout):
    base = et.arange(24, dtype=et.float64).reshape(4, 6) / 7 - 1
    x = {"transposed": base.t(), "expanded": base[:1].expand(4, 6), "sliced": base[:, ::2],
         "0-d": base[1, 2]}[layout]
    got = clipped_step(x, 0.5)
    expected = np.minimum(x.numpy(), 0.5)
    assert got.shape == x.shape
    np.testing.assert_array_equal(got.numpy(), expected)


def test_large_tensor_runs_the_parallel_loop():
    x = et.linspace(-3, 3, 300_001)  # above the threshold of splitting a loop over threads
    np.testing.assert_allclose(swish(x).numpy(), _swish_np(x.numpy().astype(np.float64)), rtol=1e-5, atol=1e-7)


def test_out_argument_and_its_rules():
    x = et.tensor([1.0, -2.0, 3.0])
    out = et.empty(3, dtype=et.float64)
    result = clipped_step(x, 0.0, out=out)
    assert result is out and out.tolist() == [0.0, -2.0, 0.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        clipped_step(x, 0.0, out=et.empty(3, dtype=et.int64))


def test_goes_through_the_dispatcher_under_a_custom_name():
    seen = []

    def spy(op, args, kwargs, redispatch):
        seen.append(op.name)
        return redispatch(op, args, kwargs)

    et.register_wrapper(spy)
    try:
        swish(et.ones(2))
    finally:
        et._dispatch.unregister_wrapper(spy)
    assert seen == ["custom::swish"]
    assert swish.__name__ == "swish"


def test_bad_calls_and_bad_bodies_give_clear_errors():
    with pytest.raises(TypeError, match=r"swish\(\) takes 1 positional argument but 2 were given"):
        swish(et.ones(2), et.ones(2))
    with pytest.raises(TypeError, match=r"expected at least one Tensor argument"):
        swish(1.0)
    with pytest.raises(TypeError, match="every parameter must be a plain positional one"):
        et.kernel(lambda *xs: xs[0])

    @et.kernel
    def uses_an_attribute(x):
        return x.real_part_of_nothing

    with pytest.raises(TypeError) as info:
        uses_an_attribute(et.ones(2))
    message = str(info.value)
    assert "Numba cannot compile uses_an_attribute() for torch.float32 inputs" in message
    assert f"{__file__}, line" in message and "Unknown attribute 'real_part_of_nothing'" in message


def test_redefining_a_kernel_replaces_it():
    @et.kernel(name="twice_or_thrice")
    def first(x):
        return 2 * x

    @et.kernel(name="twice_or_thrice")
    def second(x):
        return 3 * x

    assert et._dispatch.operators()["custom::twice_or_thrice"] is second
    assert second(et.tensor([1.0])).item() == 3.0


@et.reduce_kernel(identity=0.0)
def sum_of_squares(acc, x):
    return acc + x * x


@et.reduce_kernel(identity=float("-inf"))
def running_max(acc, x):
    return x if x > acc else acc


@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (1, True), ((0, 2), False), (-1, False)])
def test_reduce_kernel_matches_numpy(dim, keepdim):
    x = et.arange(24, dtype=et.float64).reshape(2, 3, 4).permute(1, 0, 2) / 5  # non-contiguous
    got = sum_of_squares(x, dim=dim, keepdim=keepdim)
    expected = (x.numpy() ** 2).sum(axis=dim, keepdims=keepdim)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got.numpy(), expected)


def test_reduce_kernel_integer_identity_and_errors():
    x = et.tensor([[3, -7, 2], [-1, -9, -4]])
    assert running_max(x, dim=1).tolist() == [3, -1]  # -inf identity becomes int64's minimum
    assert running_max(x).item() == 3
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        running_max(x, dim=2)


def _shift_add(out, x):
    for i in range(out.shape[0]):
        out[i] = x[i] + (x[i - 1] if i else 0.0)


def test_raw_kernel_runs_the_users_loop():
    op = et.raw_kernel(_shift_add, output=lambda x: (x.shape, x.dtype), name="shift_add")
    assert op(et.tensor([1.0, 2.0, 3.0])).tolist() == [1.0, 3.0, 5.0]
    assert op(et.tensor([[1.0, 2.0]])[0]).tolist() == [1.0, 3.0]  # a view: its strides are the loop's


_CUDA_SCRIPT = textwrap.dedent('''
    import math, numpy as np
    import ember_tensor as et
    from numba import cuda

    @et.kernel.helper
    def sig(x):
        return 1 / (1 + math.exp(-x))

    @et.kernel
    def swish(x):
        return x * sig(x)

    @et.kernel
    def axpy(a, x, y):
        return a * x + y

    @et.reduce_kernel(identity=0.0)
    def sum_of_squares(acc, x):
        return acc + x * x

    def shift_add_cuda(out, x):
        for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
            out[i] = x[i] + (x[i - 1] if i else 0.0)

    shift_add = et.raw_kernel(None, cuda=shift_add_cuda, output=lambda x: (x.shape, x.dtype))
    x = et.linspace(-3, 3, 7)
    xc = x.cuda()
    np.testing.assert_allclose(swish(xc).cpu().numpy(), swish(x).numpy(), rtol=1e-6)
    a = et.arange(6.0).reshape(2, 3)
    got = axpy(2.0, a.cuda().t(), et.ones(2).cuda())
    assert got.device.type == "cuda"
    np.testing.assert_allclose(got.cpu().numpy(), axpy(2.0, a.t(), et.ones(2)).numpy())
    np.testing.assert_allclose(sum_of_squares(a.cuda(), dim=1).cpu().numpy(), sum_of_squares(a, dim=1).numpy())
    assert shift_add(et.tensor([1.0, 2.0, 3.0]).cuda()).cpu().tolist() == [1.0, 3.0, 5.0]
    try:
        shift_add(et.tensor([1.0]))
    except RuntimeError as error:
        assert "has no CPU version" in str(error)
    else:
        raise AssertionError("a CUDA-only raw kernel ran on the CPU")
    print("CUDA parity OK")
''')


def test_cuda_parity_under_the_simulator():
    pytest.importorskip("numba.cuda")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    result = subprocess.run([sys.executable, "-c", _CUDA_SCRIPT], capture_output=True, text=True, env=env,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "CUDA parity OK" in result.stdout
