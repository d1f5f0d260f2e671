"""AMP's gradient ops (`_amp_foreach_non_finite_check_and_unscale_`, `_amp_update_scale_`):
against NumPy on every floating dtype and on contiguous, transposed, 0-d and empty
gradients, on the CPU and on CUDA inside `device_only()` (found_inf, the scale and the
tracker never read back), and PyTorch's errors."""
import doctest

import numpy as np
import pytest

import ember_tensor as et
from cuda_guard import DEVICES, device_only, kernel_launches, simulator_only

DTYPES = [et.float32, et.float64, et.float16, et.bfloat16]
# (shape, layout, poison): poison puts inf or nan at one element, or nothing
CASES = [((3, 4), "c", None), ((4, 3), "t", None), ((), "c", None), ((0,), "c", None),
         ((5,), "c", "inf"), ((4, 3), "t", "nan"), ((), "c", "-inf")]


def _grad(shape, layout, poison, dtype, device, seed):
    values = np.random.default_rng(seed).standard_normal(shape)
    if poison and values.size:
        values.reshape(-1)[values.size // 2] = float(poison)
    if layout == "t":
        t = et.tensor(np.ascontiguousarray(values.T), dtype=dtype, device=device).t()
    else:
        t = et.tensor(values, dtype=dtype, device=device)
    return t, values


def _f64(t):
    t = t.cpu()
    return np.array((t.float() if t.dtype == et.bfloat16 else t).numpy(), dtype=np.float64)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("poisoned", [None, 4, 5], ids=["finite", "inf", "nan"])
def test_check_and_unscale(device, dtype, poisoned):
    cases = [c for i, c in enumerate(CASES) if c[2] is None or i == poisoned]
    made = [_grad(shape, layout, poison, dtype, device, i) for i, (shape, layout, poison) in enumerate(cases)]
    found_inf = et.zeros(1, device=device)
    with device_only():
        et._amp_foreach_non_finite_check_and_unscale_([g for g, _ in made], found_inf, et.full((1,), 0.25, device=device))
    assert found_inf.item() == (1.0 if poisoned else 0.0)
    rtol = {et.float16: 1e-3, et.bfloat16: 1e-2}.get(dtype, 1e-7)
    for g, values in made:
        assert g.dtype == dtype and tuple(g.shape) == values.shape
        expected = _f64(et.tensor(values, dtype=dtype)) * 0.25
        np.testing.assert_allclose(_f64(g), expected, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
def test_found_inf_stays_set_and_empty_list(device):
    found_inf = et.ones(1, device=device)
    g = et.ones(3, device=device)
    et._amp_foreach_non_finite_check_and_unscale_([g], found_inf, et.ones(1, device=device))
    et._amp_foreach_non_finite_check_and_unscale_([], found_inf, et.ones(1, device=device))
    assert found_inf.item() == 1.0 and g.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("device", DEVICES)
def test_update_scale(device):
    scale = et.tensor(8.0, device=device)
    tracker = et.tensor(0, dtype=et.int32, device=device)
    clean, found = et.tensor(0.0, device=device), et.tensor(1.0, device=device)
    history = []
    with device_only():
        for found_inf in (clean, clean, found, clean, clean, clean):
            out = et._amp_update_scale_(scale, tracker, found_inf, 2.0, 0.5, 3)
            assert out is scale
            history.append((scale.clone(), tracker.clone()))
    assert [(s.item(), t.item()) for s, t in history] == [
        (8.0, 1), (8.0, 2), (4.0, 0), (4.0, 1), (4.0, 2), (8.0, 0)]
    huge = et.tensor(3e38, device=device)
    tracker.fill_(0)
    et._amp_update_scale_(huge, tracker, clean, 2.0, 0.5, 1)
    assert huge.item() == pytest.approx(3e38) and tracker.item() == 0  # an inf scale is not taken


@pytest.mark.parametrize("call, error, message", [
    (lambda: et._amp_foreach_non_finite_check_and_unscale_([et.ones(2)], et.zeros(2), et.ones(1)),
     RuntimeError, "found_inf must be a 1-element tensor."),
    (lambda: et._amp_foreach_non_finite_check_and_unscale_([et.ones(2)], et.zeros(1, dtype=et.float64), et.ones(1)),
     RuntimeError, "found_inf must be a float tensor."),
    (lambda: et._amp_foreach_non_finite_check_and_unscale_([et.ones(2)], et.zeros(1), et.ones(2)),
     RuntimeError, "inv_scale must be a 1-element tensor."),
    (lambda: et._amp_foreach_non_finite_check_and_unscale_([et.ones(2)], et.zeros(1), et.ones(1, dtype=et.float64)),
     RuntimeError, "inv_scale must be a float tensor."),
    (lambda: et._amp_foreach_non_finite_check_and_unscale_([et.ones(2, dtype=et.int64)], et.zeros(1), et.ones(1)),
     NotImplementedError, "\"_amp_foreach_non_finite_check_and_unscale_cpu\" not implemented for 'Long'"),
    (lambda: et._amp_update_scale_(et.tensor(4.0), et.tensor(0.0), et.tensor(0.0), 2.0, 0.5, 3),
     RuntimeError, "growth_tracker must be an int tensor."),
    (lambda: et._amp_update_scale_(et.tensor(4.0, dtype=et.float64), et.tensor(0, dtype=et.int32), et.tensor(0.0),
                                   2.0, 0.5, 3), RuntimeError, "current_scale must be a float tensor."),
    (lambda: et._amp_update_scale_(et.ones(2), et.tensor(0, dtype=et.int32), et.tensor(0.0), 2.0, 0.5, 3),
     RuntimeError, "current_scale must be a 1-element tensor."),
    (lambda: et._amp_update_scale_(et.tensor(4.0), et.zeros(2, dtype=et.int32), et.tensor(0.0), 2.0, 0.5, 3),
     RuntimeError, "growth_tracker must be a 1-element tensor."),
    (lambda: et._amp_update_scale_(et.tensor(4.0), et.tensor(0, dtype=et.int32), et.tensor(0, dtype=et.int32),
                                   2.0, 0.5, 3), RuntimeError, "found_inf must be a float tensor."),
])
def test_errors_are_pytorchs(call, error, message):
    with pytest.raises(error) as raised:
        call()
    assert str(raised.value) == message


def test_against_pytorch():
    torch = pytest.importorskip("torch")
    values = [np.array([1.0, 2.0, 3.0]), np.array([[4.0, float("nan")]])]
    ours = [et.tensor(v, dtype=et.float32) for v in values]
    theirs = [torch.tensor(v, dtype=torch.float32) for v in values]
    f, tf = et.zeros(1), torch.zeros(1)
    et._amp_foreach_non_finite_check_and_unscale_(ours, f, et.tensor([0.5]))
    torch._amp_foreach_non_finite_check_and_unscale_(theirs, tf, torch.tensor([0.5]))
    assert f.item() == tf.item()
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def _many_grads(count, dtype, poison_at=None, poison=float("inf")):
    """`count` gradients of assorted sizes and layouts (every third transposed, one 0-d,
    one empty) as NumPy values, one optionally poisoned."""
    rng = np.random.default_rng(count)
    shapes = [(i % 5 + 1, i % 3 + 2) for i in range(count)]
    shapes[1 % count], shapes[2 % count] = (), (0,)
    values = [rng.standard_normal(shape) for shape in shapes]
    if poison_at is not None:
        values[poison_at].reshape(-1)[-1] = poison
    return values


def _on(values, dtype, device):
    return [et.tensor(np.ascontiguousarray(v.T), dtype=dtype, device=device).t() if v.ndim == 2 and i % 3 == 0
            else et.tensor(v, dtype=dtype, device=device) for i, v in enumerate(values)]


@simulator_only
@pytest.mark.parametrize("dtype", [et.float32, et.float64, et.float16, et.bfloat16], ids=str)
@pytest.mark.parametrize("count, poison_at, poison", [(7, None, None), (7, 6, float("inf")), (7, 3, float("nan")),
                                                      (64, 63, float("-inf")), (130, 129, float("nan")),
                                                      (130, None, None)])
def test_cuda_unscale_is_one_multi_tensor_launch_per_64_gradients(dtype, count, poison_at, poison):
    """All the gradients of a dtype in one kernel launch (a new launch per 64, PyTorch's
    table fills at 110), with the results of one op call per gradient and of the CPU."""
    values = _many_grads(count, dtype, poison_at, poison)
    together = _on(values, dtype, "cuda")
    found_inf = et.zeros(1, device="cuda")
    inv_scale = et.full((1,), 0.125, device="cuda")
    with kernel_launches() as names, device_only():
        et._amp_foreach_non_finite_check_and_unscale_(together, found_inf, inv_scale)
    checks = [n for n in names if "check_and_unscale" in n]
    assert len(checks) == -(-count // 64)
    assert found_inf.item() == (0.0 if poison_at is None else 1.0)
    one_by_one, on_cpu = _on(values, dtype, "cuda"), _on(values, dtype, "cpu")
    found_each, found_cpu = et.zeros(1, device="cuda"), et.zeros(1)
    for g in one_by_one:
        et._amp_foreach_non_finite_check_and_unscale_([g], found_each, inv_scale)
    et._amp_foreach_non_finite_check_and_unscale_(on_cpu, found_cpu, et.full((1,), 0.125))
    assert found_each.item() == found_cpu.item() == found_inf.item()
    for a, b, c in zip(together, one_by_one, on_cpu):
        assert a.is_contiguous() == c.is_contiguous()  # written back into the caller's layout
        np.testing.assert_array_equal(_f64(a), _f64(b))
        np.testing.assert_array_equal(_f64(a), _f64(c))


def test_docstring_examples():
    from ember_tensor._ops import amp

    assert doctest.testmod(amp, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
