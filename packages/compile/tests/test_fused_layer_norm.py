"""Layer norm prologues: an elementwise tree whose one consumer is ``F.layer_norm`` or
``nn.LayerNorm`` runs inside eager's layer norm row kernel. Results equal eager ember's
bit for bit (float32 and float64, weight and bias present or not, normalized shapes of
one and two dims, broadcast and transposed operands) and eager PyTorch's within float
tolerance, on the CPU and on CUDA; gradients (input, residual, weight, bias) equal
eager's with and without the ahead-of-time backward; other dtypes and empty inputs run
the eager composition, which raises eager's errors; a tree used elsewhere does not fuse."""
import numpy as np
import pytest

import ember_autograd
import ember_nn as nn
import ember_nn.functional as F
import ember_tensor as torch
from ember_compile import compile, config
from ember_compile.fusion import FusedGroup
from ember_compile.joint import JointPlan
from ember_tensor.fusion import FusedLayerNorm

pt = pytest.importorskip("torch")
import torch.nn.functional as PF  # noqa: E402  (the oracle's functional, next to ember's)


def _groups(compiled):
    holder = compiled._compiled_function if isinstance(compiled, nn.Module) else compiled._ember_compiled_function
    gm = holder.graph_modules[-1]
    return [n.target for n in gm.graph.nodes if isinstance(n.target, FusedGroup)]


def _norms(compiled):
    return [g for g in _groups(compiled) if isinstance(g.program, FusedLayerNorm)]


# (name, function of (functional, x, r, w, b), x's shape, r's shape, normalized shape,
# which of weight/bias are given): written once for ember and PyTorch, the same calls.
CASES = [
    ("residual", lambda F, x, r, w, b: F.layer_norm(x + r, (16,), w, b, 1e-5), (6, 16), (6, 16), (16,), "wb"),
    ("scale_shift", lambda F, x, r, w, b: F.layer_norm(x * 1.5 + r, [16], w, b), (6, 16), (16,), (16,), "wb"),
    ("no_affine", lambda F, x, r, w, b: F.layer_norm(x - r, (16,)), (3, 4, 16), (4, 16), (16,), ""),
    ("weight_only", lambda F, x, r, w, b: F.layer_norm((x + r).relu(), (16,), w, eps=1e-6), (5, 16), (5, 1), (16,),
     "w"),
    ("bias_only", lambda F, x, r, w, b: F.layer_norm(x + r, (16,), bias=b), (5, 16), (16,), (16,), "b"),
    ("two_dims", lambda F, x, r, w, b: F.layer_norm(x + r, (4, 8), w, b), (3, 4, 8), (4, 8), (4, 8), "wb"),
    ("two_dims_unmerged", lambda F, x, r, w, b: F.layer_norm(x * r, (4, 8), w, b), (3, 4, 8), (8,), (4, 8), "wb"),
    ("tree", lambda F, x, r, w, b: F.layer_norm(torch_where(F, r > 0, x * 2.0, x.tanh() - 1.0) + r, (16,), w, b),
     (6, 16), (16,), (16,), "wb"),
]


def torch_where(F, cond, a, b):
    # torch.where in either framework (F is its functional module, beside the framework).
    return (pt if F is PF else torch).where(cond, a, b)


def _inputs(module, dtype, x_shape, r_shape, shape, which, transpose=False):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(x_shape) * 3 + 1
    r = rng.standard_normal(r_shape)
    dt = getattr(module, dtype)
    if transpose:  # non-contiguous: the same values read through transposed memory
        xt = module.tensor(np.ascontiguousarray(np.swapaxes(x, -1, -2)), dtype=dt).transpose(-1, -2)
    else:
        xt = module.tensor(x, dtype=dt)
    w = module.tensor(rng.standard_normal(shape), dtype=dt) if "w" in which else None
    b = module.tensor(rng.standard_normal(shape), dtype=dt) if "b" in which else None
    return xt, module.tensor(r, dtype=dt), w, b


def _close(a, b, dtype):
    tol = 1e-4 if dtype == "float32" else 1e-10
    return np.allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol, equal_nan=True)


def _bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.cpu().numpy().tobytes() == b.cpu().numpy().tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("name,fn,x_shape,r_shape,shape,which", CASES, ids=[c[0] for c in CASES])
def test_fused_layer_norm_equals_eager_and_pytorch(name, fn, x_shape, r_shape, shape, which, dtype, transpose):
    compiled = compile(lambda x, r, w, b: fn(F, x, r, w, b))
    args = _inputs(torch, dtype, x_shape, r_shape, shape, which, transpose)
    got = compiled(*args)
    assert _bits(got, fn(F, *args)), name   # eager's row kernel on the tree's values: its bits
    reference = fn(PF, *_inputs(pt, dtype, x_shape, r_shape, shape, which, transpose))
    assert _close(got.numpy(), reference.numpy(), dtype), name
    fused = _norms(compiled)
    assert len(fused) == 1 and fused[0].calls == 1 and len(_groups(compiled)) == 1


class Block(nn.Module):
    """A Transformer block's residual adds, each normalised (post-norm), and a norm
    with no affine parameters."""

    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.norm1 = nn.LayerNorm(d)
        self.norm2 = nn.LayerNorm((4, d // 4), bias=False)
        self.norm3 = nn.LayerNorm(d, elementwise_affine=False)

    def forward(self, x):
        h = self.norm1(x + self.proj(x))
        h2 = self.norm2((h * 0.5 + x).reshape(-1, 4, h.shape[-1] // 4) * 2.0)
        return h, h2, self.norm3(h - x)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nn_layer_norm_modules_fuse(dtype):
    model = Block(16).to(getattr(torch, dtype))
    x = torch.tensor(np.random.default_rng(3).standard_normal((8, 16)), dtype=getattr(torch, dtype))
    compiled = compile(model)
    with ember_autograd.no_grad():
        got, eager = compiled(x), model(x)
    assert all(_bits(a, b) for a, b in zip(got, eager))
    norms = _norms(compiled)
    assert [g.calls for g in norms] == [1, 1, 1]
    # (the reshape keeps ``h * 0.5 + x`` out of norm2's tree: a group of its own)
    assert [len(g.program.steps) for g in norms] == [1, 1, 1]
    assert [(g.program.weight, g.program.bias) for g in norms] == [(True, True), (True, False), (False, False)]


@pytest.mark.parametrize("ahead_of_time_backward", [False, True])
@pytest.mark.parametrize("name,fn,x_shape,r_shape,shape,which", CASES[:7], ids=[c[0] for c in CASES[:7]])
def test_gradients_equal_eager_and_pytorch(name, fn, x_shape, r_shape, shape, which, ahead_of_time_backward,
                                           monkeypatch):
    # Off: the group is one autograd.Function differentiating its eager composition; on:
    # the training call runs the lowered graph, the fused layer norm recorded as its ops.
    monkeypatch.setattr(config, "ahead_of_time_backward", ahead_of_time_backward)
    compiled = compile(lambda x, r, w, b: fn(F, x, r, w, b))
    args = [t if t is None else t.requires_grad_() for t in _inputs(torch, "float64", x_shape, r_shape, shape, which)]
    out = compiled(*args)
    assert out.grad_fn is not None
    if ahead_of_time_backward:
        holder = compiled._ember_compiled_function
        plans = [p for joint in holder.joints if joint is not None for p in joint.plans.values()]
        assert [type(p) for p in plans] == [JointPlan] and type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    else:
        assert _norms(compiled)[0].calls == (1 if len(_norms(compiled)[0].program.steps) > 1 else 0)
    leaves = [t for t in args if t is not None]
    weights = torch.tensor(np.random.default_rng(5).standard_normal(out.shape))
    grads = ember_autograd.grad((out * weights).sum(), leaves, allow_unused=True)
    eager_args = [t if t is None else t.detach().requires_grad_() for t in args]
    eager_leaves = [t for t in eager_args if t is not None]
    eager_grads = ember_autograd.grad((fn(F, *eager_args) * weights).sum(), eager_leaves, allow_unused=True)
    pt_args = [t if t is None else t.requires_grad_() for t in _inputs(pt, "float64", x_shape, r_shape, shape, which)]
    pt_leaves = [t for t in pt_args if t is not None]
    pt_grads = pt.autograd.grad((fn(PF, *pt_args) * pt.tensor(weights.numpy())).sum(), pt_leaves, allow_unused=True)
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
    ("wrong_shape", lambda: (torch.randn(3, 5), torch.randn(5)), "normalized_shape"),
])
def test_what_the_kernel_does_not_take_runs_the_eager_composition(name, make, expected_error):
    fn = lambda x, r: F.layer_norm(x * 2 + r, (4,))  # noqa: E731
    compiled = compile(fn)
    x, r = make()
    if expected_error is not None:
        with pytest.raises(RuntimeError, match=expected_error):
            fn(x, r)
        with pytest.raises(RuntimeError, match=expected_error):
            compiled(x, r)
    else:
        got, eager = compiled(x, r), fn(x, r)
        assert got.dtype == eager.dtype and got.shape == eager.shape
        assert np.array_equal(got.float().numpy(), eager.float().numpy(), equal_nan=True), name
    assert _norms(compiled)[0].calls == 0


def test_what_does_not_fuse_into_the_layer_norm():
    def shared(x, r):
        s = x + r
        return F.layer_norm(s, (6,)), s * 2.0   # the tree has another consumer

    compiled = compile(shared)
    x, r = torch.randn(4, 6), torch.randn(6)
    assert all(torch.equal(a, b) for a, b in zip(compiled(x, r), shared(x, r)))
    assert not _norms(compiled)
    fn = lambda x, r: F.layer_norm(x @ r.reshape(6, 1).expand(6, 6), (6,))  # noqa: E731  (no elementwise input)
    compiled = compile(fn)
    assert torch.equal(compiled(x, r), fn(x, r)) and not _norms(compiled)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator (its tox env sets the simulator)")
# Small shapes: the simulator runs a Python thread per CUDA thread.
@pytest.mark.parametrize("name,fn,small_x,small_r,shape,which", [
    (CASES[0][0], CASES[0][1], (3, 16), (3, 16), (16,), "wb"),
    (CASES[2][0], CASES[2][1], (2, 2, 16), (2, 16), (16,), ""),
    (CASES[3][0], CASES[3][1], (2, 16), (2, 1), (16,), "w"),
    (CASES[5][0], CASES[5][1], (2, 4, 8), (4, 8), (4, 8), "wb"),
], ids=[CASES[i][0] for i in (0, 2, 3, 5)])
@pytest.mark.parametrize("transpose", [False, True])
def test_cuda_tensors_run_the_fused_layer_norm(name, fn, small_x, small_r, shape, which, transpose):
    compiled = compile(lambda x, r, w, b: fn(F, x, r, w, b))
    args = [t if t is None else t.cuda() for t in _inputs(torch, "float32", small_x, small_r, shape, which, transpose)]
    got = compiled(*args)
    assert got.device.type == "cuda"
    assert _bits(got, fn(F, *args)), name   # eager CUDA's kernel, its bits
    reference = fn(PF, *_inputs(pt, "float32", small_x, small_r, shape, which, transpose))
    assert _close(got.cpu().numpy(), reference.numpy(), "float32")
    assert _norms(compiled)[0].calls == 1


def test_the_log_shows_the_fused_layer_norm_and_its_kernel(capsys):
    compiled = compile(lambda x, r: F.layer_norm(x * 0.5 + r, (6,)), options={"trace.fusion": True, "trace.code": True})
    compiled(torch.randn(4, 6), torch.randn(6))
    err = capsys.readouterr().err
    assert "fused_layer_norm_0: 2 ops" in err and "layer_norm(" in err
    assert "# normalised by eager's row kernel: layer_norm([6], weight=False, bias=False, eps=1e-05)" in err


@pytest.mark.parametrize("fn,fuses", [
    (lambda x, w: F.layer_norm(x + w, (8,), w), True),                    # the weight also in the tree
    (lambda x, w: F.layer_norm(x * 2.0 - w, (8,), eps=0.1, bias=w), True),
    (lambda x, w: F.layer_norm(x * 2.0, (8,), w, w), False),             # one node as weight and bias: eager
], ids=["weight_in_tree", "bias_in_tree", "weight_is_bias"])
def test_a_tensor_given_twice(fn, fuses):
    compiled = compile(fn)
    x, w = torch.randn(3, 8, dtype=torch.float64), torch.randn(8, dtype=torch.float64)
    assert _bits(compiled(x, w), fn(x, w))
    assert _norms(compiled)[0].calls == (1 if fuses else 0)
    x.requires_grad_()
    w.requires_grad_()
    got = ember_autograd.grad((compiled(x, w) ** 2).sum(), [x, w])
    expected = ember_autograd.grad((fn(x, w) ** 2).sum(), [x, w])
    assert all(torch.equal(g, e) for g, e in zip(got, expected))
