"""Output dtypes under CPU autocast against PyTorch itself (the test-only oracle): every
case of `_oplist_cases` for bfloat16 and float16 regions and for float32, lower-precision
and mixed inputs, plus the region's rules (nesting, enabled=False inside, cache, errors)."""
import itertools

import numpy as np
import pytest

import ember_amp
import _functional as EF
import ember_tensor as et
from ember_autograd.graph import saved_tensors_hooks
from _oplist_cases import CASES

torch = pytest.importorskip("torch")
TF = torch.nn.functional

_DTYPES = {"float32": (et.float32, torch.float32), "bfloat16": (et.bfloat16, torch.bfloat16),
           "float16": (et.float16, torch.float16)}


def _inputs(specs, dtypes, seed=0):
    """The same values as ember and as torch tensors, float inputs in `dtypes` in turn."""
    rng = np.random.default_rng(seed)
    ours, theirs = [], []
    floats = itertools.cycle(dtypes)
    for spec in specs:
        if isinstance(spec, str):  # "i:n:classes": int64 targets
            _, n, classes = spec.split(":")
            values = rng.integers(0, int(classes), int(n))
            ours.append(et.tensor(values))
            theirs.append(torch.tensor(values))
            continue
        e_dtype, t_dtype = _DTYPES[next(floats)]
        values = rng.standard_normal(spec).astype(np.float32)
        ours.append(et.tensor(values).to(e_dtype))
        theirs.append(torch.tensor(values).to(t_dtype))
    return ours, theirs


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


@pytest.mark.parametrize("region", ["bfloat16", "float16"])
@pytest.mark.parametrize("inputs", [("float32",), ("bfloat16",), ("float32", "bfloat16")],
                         ids=["fp32", "bf16", "mixed"])
@pytest.mark.parametrize("name, specs, fn", CASES, ids=[c[0] for c in CASES])
def test_output_dtype_matches_pytorch(name, specs, fn, inputs, region):
    ours, theirs = _inputs(specs, inputs)
    try:
        with torch.autocast("cpu", dtype=_DTYPES[region][1]):
            expected = fn(torch, TF, *theirs)
    except RuntimeError:
        pytest.skip("PyTorch refuses these input dtypes")
    with ember_amp.autocast("cpu", dtype=_DTYPES[region][0]):
        got = fn(et, EF, *ours)
    assert _dtype_name(got.dtype) == _dtype_name(expected.dtype)
    np.testing.assert_allclose(got.float().detach().numpy(), expected.float().detach().numpy(),
                               rtol=5e-2, atol=5e-2)


def test_default_dtypes_and_state():
    assert ember_amp.get_autocast_dtype("cpu") == et.bfloat16
    assert ember_amp.get_autocast_dtype("cuda") == et.float16
    assert not ember_amp.is_autocast_enabled("cpu") and not ember_amp.is_autocast_enabled()
    assert ember_amp.is_autocast_cache_enabled()
    with ember_amp.autocast("cpu", dtype=et.float16):
        assert ember_amp.is_autocast_enabled("cpu")
        assert ember_amp.get_autocast_dtype("cpu") == et.float16
    assert not ember_amp.is_autocast_enabled("cpu")
    assert ember_amp.get_autocast_dtype("cpu") == et.bfloat16


@pytest.mark.parametrize("name, args", [
    ("is_autocast_cpu_enabled", ()), ("set_autocast_cpu_enabled", (False,)), ("get_autocast_cpu_dtype", ()),
    ("set_autocast_cpu_dtype", ("bfloat16",)), ("get_autocast_gpu_dtype", ()), ("set_autocast_gpu_dtype", ("float16",)),
])
def test_deprecated_per_device_functions_warn_as_pytorch(name, args):
    with pytest.warns(DeprecationWarning) as ours:
        ours_result = getattr(ember_amp, name)(*(getattr(et, a) if isinstance(a, str) else a for a in args))
    with pytest.warns(DeprecationWarning) as theirs:
        their_result = getattr(torch, name)(*(getattr(torch, a) if isinstance(a, str) else a for a in args))
    assert str(ours[0].message) == str(theirs[0].message).split(" (Triggered internally")[0]
    assert str(ours_result) == str(their_result)


def test_set_autocast_enabled_with_one_argument_means_cuda():
    ember_amp.set_autocast_enabled(True)
    try:
        assert ember_amp.is_autocast_enabled("cuda") and not ember_amp.is_autocast_enabled("cpu")
    finally:
        ember_amp.set_autocast_enabled(False)
    assert not ember_amp.is_autocast_enabled()


def test_nesting_and_disabled_subregion():
    a = et.ones(2, 2)
    with ember_amp.autocast("cpu"):
        assert et.mm(a, a).dtype == et.bfloat16
        with ember_amp.autocast("cpu", enabled=False):
            assert not ember_amp.is_autocast_enabled("cpu")
            assert et.mm(a, a).dtype == et.float32
            with ember_amp.autocast("cpu", dtype=et.float16):
                assert et.mm(a, a).dtype == et.float16
        assert et.mm(a, a).dtype == et.bfloat16
    assert et.mm(a, a).dtype == et.float32


def test_out_variants_run_as_called():
    a, b, out = et.ones(2, 2), et.ones(2, 2), et.empty(2, 2)
    ta, tb, tout = torch.ones(2, 2), torch.ones(2, 2), torch.empty(2, 2)
    with ember_amp.autocast("cpu"), torch.autocast("cpu"):
        et.mm(a, b, out=out)
        torch.mm(ta, tb, out=tout)
    assert _dtype_name(out.dtype) == _dtype_name(tout.dtype) == "float32"
    assert out.tolist() == tout.tolist()


def test_decorator():
    @ember_amp.autocast("cpu")
    def forward(x):
        return x @ x

    assert forward(et.ones(2, 2)).dtype == et.bfloat16
    assert forward.__name__ == "forward"
    assert not ember_amp.is_autocast_enabled("cpu")


def test_float64_and_integer_inputs_are_not_cast():
    with ember_amp.autocast("cpu"):
        assert et.mm(et.ones(2, 2, dtype=et.float64), et.ones(2, 2, dtype=et.float64)).dtype == et.float64
        assert et.cat([et.ones(2, dtype=et.int64), et.ones(2, dtype=et.int64)]).dtype == et.int64


def test_weight_cast_cache_within_a_region():
    w = et.ones(3, 3, requires_grad=True)
    x = et.ones(2, 3)
    with ember_amp.autocast("cpu"):
        first = et.mm(x, w)
        second = et.mm(x, w)
        # one cast of the leaf, reused: both products share the same cast node
        assert first.grad_fn.next_functions[1][0] is second.grad_fn.next_functions[1][0]
    with ember_amp.autocast("cpu"):
        assert et.mm(x, w).dtype == et.bfloat16
        with ember_amp.autocast("cpu", dtype=et.float16):
            assert et.mm(x, w).dtype == et.float16  # its own cached copy, not the bfloat16 one
    with ember_amp.autocast("cpu", cache_enabled=False):
        third = et.mm(x, w)
        fourth = et.mm(x, w)
        assert third.grad_fn.next_functions[1][0] is not fourth.grad_fn.next_functions[1][0]


def test_gradients_come_back_in_the_parameters_dtype():
    w = et.randn(4, 3, requires_grad=True)
    b = et.zeros(4, requires_grad=True)
    x = et.randn(5, 3)
    with ember_amp.autocast("cpu"):
        out = EF.linear(x, w, b)
        assert out.dtype == et.bfloat16
        loss = out.float().pow(2).mean()
    loss.backward()
    assert w.grad.dtype == et.float32 and b.grad.dtype == et.float32
    tw = torch.tensor(w.detach().numpy(), requires_grad=True)
    tb = torch.zeros(4, requires_grad=True)
    with torch.autocast("cpu"):
        tloss = TF.linear(torch.tensor(x.numpy()), tw, tb).float().pow(2).mean()
    tloss.backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=5e-2, atol=5e-2)


def test_saved_activations_are_lower_precision():
    """matmul saves its (cast) inputs: in bfloat16, half the bytes of float32."""
    w = et.randn(8, 8, requires_grad=True)
    x = et.randn(4, 8)
    saved = []
    with saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t), ember_amp.autocast("cpu"):
        et.mm(x, w)
    assert saved and all(t.dtype == et.bfloat16 for t in saved)


@pytest.mark.parametrize("device_type, message", [
    ("foo", "Expected one of cpu, cuda"),
])
def test_unknown_device_type(device_type, message):
    with pytest.raises(RuntimeError, match=message):
        ember_amp.autocast(device_type)


def test_device_type_must_be_a_string():
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ember_amp.autocast(et.device("cpu"))


def test_unsupported_cpu_dtype_warns_and_disables():
    with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
        region = ember_amp.autocast("cpu", dtype=et.float32)
    with region:
        assert not ember_amp.is_autocast_enabled("cpu")


def test_decorating_a_non_callable():
    with pytest.raises(TypeError, match="requires a callable"):
        ember_amp.autocast("cpu")(3)


def test_deprecated_spellings_warn():
    with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is deprecated"):
        region = ember_amp.cpu_amp.autocast()
    with region:
        assert ember_amp.is_autocast_enabled("cpu")
    with pytest.warns(FutureWarning, match=r"torch.cpu.amp.GradScaler\(args...\)` is deprecated"):
        assert ember_amp.cpu_amp.GradScaler().is_enabled()


def test_custom_fwd_casts_inputs_and_custom_bwd_restores_state():
    import ember_autograd

    seen = {}

    class Square(ember_autograd.Function):
        @staticmethod
        @ember_amp.custom_fwd(device_type="cpu", cast_inputs=et.float32)
        def forward(ctx, x):
            seen["fwd"] = (x.dtype, ember_amp.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @ember_amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            seen["bwd"] = ember_amp.is_autocast_enabled("cpu")
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    x = et.ones(3, dtype=et.bfloat16, requires_grad=True)
    with ember_amp.autocast("cpu"):
        y = Square.apply(x)
    y.sum().backward()
    assert seen == {"fwd": (et.float32, False), "bwd": False}
    assert x.grad.dtype == et.bfloat16
