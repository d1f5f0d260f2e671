"""Softmax prologues: an elementwise tree whose one consumer is softmax/log_softmax runs
inside eager's softmax row kernel. Results equal eager ember's bit for bit (float32 and
float64) and eager PyTorch's within float tolerance, on the CPU and on CUDA; gradients
equal eager's with and without the ahead-of-time backward; other dtypes, empty and 0-d
inputs run the eager composition; a tree used elsewhere does not fuse."""
import numpy as np
import pytest

import ember_autograd
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch
from ember_compile import compile, config
from ember_compile.fusion import FusedGroup
from ember_compile.joint import JointPlan
from ember_tensor.fusion import FusedSoftmax

pt = pytest.importorskip("torch")
import torch.nn.functional as PF  # noqa: E402  (the oracle's functional, next to ember's)


def _groups(compiled):
    holder = compiled._compiled_function if isinstance(compiled, nn.Module) else compiled._ember_compiled_function
    gm = holder.graph_modules[-1]
    return [n.target for n in gm.graph.nodes if isinstance(n.target, FusedGroup)]


def _softmaxes(compiled):
    return [g for g in _groups(compiled) if isinstance(g.program, FusedSoftmax)]


# (name, function of (module, functional, x, m), x's shape, m's shape): written once for
# ember and PyTorch, the same calls.
CASES = [
    ("scaled_masked", lambda T, F, x, m: T.softmax(x * 0.125 + m, dim=-1), (6, 37), (37,)),
    ("log_temperature", lambda T, F, x, m: F.log_softmax(x / 0.7, -1), (6, 37), (37,)),
    ("method", lambda T, F, x, m: (x - m).exp().softmax(-1), (5, 9), (5, 1)),
    ("log_method_kwarg", lambda T, F, x, m: (x * m).log_softmax(dim=-1), (5, 9), (9,)),
    ("attention_mask", lambda T, F, x, m: F.softmax(x * 0.125 + m, dim=-1), (2, 3, 8, 8), (8, 8)),
    ("non_last_dim", lambda T, F, x, m: F.softmax(x.tanh() + m, dim=1), (4, 6, 5), (6, 1)),
    ("first_dim_log", lambda T, F, x, m: T.log_softmax(x + m, 0), (7, 3), (3,)),
    ("trailing_one", lambda T, F, x, m: T.softmax(x.sigmoid() * m, 1), (4, 9, 1), (9, 1)),
    ("tree", lambda T, F, x, m: T.softmax(T.where(m > 0, x * 2.0, x.relu() - 1.0) + m, -1), (6, 11), (11,)),
]


def _inputs(module, dtype, x_shape, m_shape, transpose=False):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape) * 3
    m = rng.standard_normal(m_shape)
    dt = getattr(module, dtype)
    if transpose:  # non-contiguous: the same values read through transposed memory
        xt = module.tensor(np.ascontiguousarray(np.swapaxes(x, -1, -2)), dtype=dt).transpose(-1, -2)
        return xt, module.tensor(m, dtype=dt)
    return module.tensor(x, dtype=dt), module.tensor(m, dtype=dt)


def _close(a, b, dtype):
    tol = 1e-5 if dtype == "float32" else 1e-12
    return np.allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("name,fn,x_shape,m_shape", CASES, ids=[c[0] for c in CASES])
def test_fused_softmax_equals_eager_and_pytorch(name, fn, x_shape, m_shape, dtype, transpose):
    compiled = compile(lambda x, m: fn(torch, F, x, m))
    args = _inputs(torch, dtype, x_shape, m_shape, transpose)
    got = compiled(*args)
    eager = fn(torch, F, *args)
    assert got.shape == eager.shape and got.dtype == eager.dtype
    assert torch.equal(got, eager), name   # eager's row kernel on the tree's values: its bits
    reference = fn(pt, PF, *_inputs(pt, dtype, x_shape, m_shape, transpose))
    assert _close(got.numpy(), reference.numpy(), dtype), name
    fused = _softmaxes(compiled)
    assert len(fused) == 1 and fused[0].calls == 1 and len(_groups(compiled)) == 1


def test_nn_softmax_modules_and_attention_scores():
    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.softmax = nn.Softmax(dim=-1)
            self.log_softmax = nn.LogSoftmax(dim=-1)

        def forward(self, q, k):
            scores = (q @ k.transpose(-2, -1)) * 0.25
            return self.softmax(scores), self.log_softmax(q * 2.0)

    model = Attention()
    compiled = compile(model)
    rng = np.random.default_rng(3)
    q, k = (torch.tensor(rng.standard_normal((2, 4, 16, 8)), dtype=torch.float32) for _ in range(2))
    got, eager = compiled(q, k), model(q, k)
    assert all(torch.equal(a, b) for a, b in zip(got, eager))
    pq, pk = pt.tensor(q.numpy()), pt.tensor(k.numpy())
    assert _close(got[0].numpy(), PF.softmax((pq @ pk.transpose(-2, -1)) * 0.25, -1).numpy(), "float32")
    assert [g.calls for g in _softmaxes(compiled)] == [1, 1]


@pytest.mark.parametrize("shape,m_shape", [((64, 4, 64, 64), (64, 64)), ((300, 1000), (1000,))])
def test_large_inputs_and_masks_of_minus_infinity(shape, m_shape):
    # Threaded row ranges, two runs of rows (a mask broadcast over batch and heads).
    fn = lambda x, m: torch.softmax(x * 0.125 + m, -1)  # noqa: E731
    compiled = compile(fn)
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.standard_normal(shape), dtype=torch.float32)
    m = torch.tensor(np.where(rng.random(m_shape) < 0.2, -np.inf, 0.0), dtype=torch.float32)
    assert torch.equal(compiled(x, m), fn(x, m))
    assert _softmaxes(compiled)[0].calls == 1


@pytest.mark.parametrize("ahead_of_time_backward", [False, True])
@pytest.mark.parametrize("name,fn,x_shape,m_shape", CASES[:6], ids=[c[0] for c in CASES[:6]])
def test_gradients_equal_eager_and_pytorch(name, fn, x_shape, m_shape, ahead_of_time_backward, monkeypatch):
    # Off: the group is one autograd.Function differentiating its eager composition; on:
    # the training call runs the lowered graph, the fused softmax recorded as its ops.
    monkeypatch.setattr(config, "ahead_of_time_backward", ahead_of_time_backward)
    compiled = compile(lambda x, m: fn(torch, F, x, m))
    args = [t.requires_grad_() for t in _inputs(torch, "float64", x_shape, m_shape)]
    out = compiled(*args)
    assert out.grad_fn is not None
    if ahead_of_time_backward:
        holder = compiled._ember_compiled_function
        plans = [p for joint in holder.joints if joint is not None for p in joint.plans.values()]
        assert [type(p) for p in plans] == [JointPlan] and type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    weights = torch.tensor(np.random.default_rng(5).standard_normal(out.shape))
    grads = ember_autograd.grad((out * weights).sum(), args, allow_unused=True)
    eager_args = [t.detach().requires_grad_() for t in args]
    eager_grads = ember_autograd.grad((fn(torch, F, *eager_args) * weights).sum(), eager_args, allow_unused=True)
    pt_args = [t.requires_grad_() for t in _inputs(pt, "float64", x_shape, m_shape)]
    pt_grads = pt.autograd.grad((fn(pt, PF, *pt_args) * pt.tensor(weights.numpy())).sum(), pt_args,
                                allow_unused=True)
    for g, e, p in zip(grads, eager_grads, pt_grads):
        assert (g is None) == (e is None) == (p is None)
        if g is not None:
            assert torch.equal(g, e), name
            assert _close(g.numpy(), p.numpy(), "float64"), name


@pytest.mark.parametrize("name,make,expected_error", [
    ("int64", lambda: (torch.arange(12).reshape(3, 4), torch.arange(4)), "not implemented for 'Long'"),
    ("float16", lambda: (torch.randn(3, 4).half(), torch.randn(4).half()), None),
    ("mixed", lambda: (torch.randn(3, 4), torch.randn(4, dtype=torch.float64)), None),
    ("empty", lambda: (torch.zeros(0, 4), torch.zeros(4)), None),
    ("zero_dim", lambda: (torch.tensor(1.5), torch.tensor(0.5)), None),
    ("dim_out_of_range", lambda: (torch.randn(4), torch.randn(4)), "Dimension out of range"),
])
def test_what_the_kernel_does_not_take_runs_the_eager_composition(name, make, expected_error):
    fn = (lambda x, m: torch.softmax(x * 2 + m, 1)) if name == "dim_out_of_range" else \
        (lambda x, m: torch.softmax(x * 2 + m, -1))
    compiled = compile(fn)
    x, m = make()
    if expected_error is not None:
        with pytest.raises((RuntimeError, IndexError), match=expected_error):
            fn(x, m)
        with pytest.raises((RuntimeError, IndexError), match=expected_error):
            compiled(x, m)
    else:
        got, eager = compiled(x, m), fn(x, m)
        assert got.dtype == eager.dtype and got.shape == eager.shape
        assert np.array_equal(got.float().numpy(), eager.float().numpy(), equal_nan=True), name
    assert _softmaxes(compiled)[0].calls == 0


def test_what_does_not_fuse_into_the_softmax():
    def shared(x, m):
        s = x * 0.5 + m
        return s.softmax(-1), s * 2.0   # the tree has another consumer

    compiled = compile(shared)
    x, m = _inputs(torch, "float32", (4, 6), (6,))
    assert all(torch.equal(a, b) for a, b in zip(compiled(x, m), shared(x, m)))
    assert not _softmaxes(compiled) and len(_groups(compiled)) == 1   # an elementwise group
    for fn in (lambda x, m: (x * m).softmax(-1, dtype=torch.float64),   # dtype= is eager's
               lambda x, m: F.softmax(x * m, dim=None, _stacklevel=5)):  # the implicit dim
        compiled = compile(fn)
        assert torch.equal(compiled(x, m), fn(x, m)) and not _softmaxes(compiled)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator (its tox env sets the simulator)")
# Small shapes: the simulator runs a Python thread per CUDA thread.
@pytest.mark.parametrize("name,fn,small_x,small_m", [
    (CASES[0][0], CASES[0][1], (3, 5), (5,)), (CASES[1][0], CASES[1][1], (3, 5), (5,)),
    (CASES[4][0], CASES[4][1], (2, 2, 3, 3), (3, 3)), (CASES[5][0], CASES[5][1], (2, 3, 2), (3, 1)),
], ids=[CASES[i][0] for i in (0, 1, 4, 5)])
@pytest.mark.parametrize("transpose", [False, True])
def test_cuda_tensors_run_the_fused_softmax(name, fn, small_x, small_m, transpose):
    compiled = compile(lambda x, m: fn(torch, F, x, m))
    args = [t.cuda() for t in _inputs(torch, "float32", small_x, small_m, transpose)]
    got = compiled(*args)
    assert got.device.type == "cuda"
    assert torch.equal(got.cpu(), fn(torch, F, *args).cpu()), name   # eager CUDA's kernel, its bits
    reference = fn(pt, PF, *_inputs(pt, "float32", small_x, small_m, transpose))
    assert _close(got.cpu().numpy(), reference.numpy(), "float32")
    assert _softmaxes(compiled)[0].calls == 1


def test_the_log_shows_the_fused_softmax_and_its_kernel(capsys):
    compiled = compile(lambda x, m: torch.softmax(x * 0.125 + m, -1),
                       options={"trace.fusion": True, "trace.code": True})
    compiled(*_inputs(torch, "float32", (4, 6), (6,)))
    err = capsys.readouterr().err
    assert "fused_softmax_0: 2 ops" in err and "softmax(" in err
    assert "T(mul(x0, T(0.125)))" in err and "# normalised by eager's row kernel: softmax(dim=-1)" in err
