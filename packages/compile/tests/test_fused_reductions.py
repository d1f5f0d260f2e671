"""Reduction prologues: an elementwise tree whose one consumer is sum/mean/amax/amin runs
as one generated reduction loop. Results equal eager ember's bit for bit (float32 and
float64) and eager PyTorch's within float tolerance, on the CPU and on CUDA; gradients
equal eager's with and without the ahead-of-time backward; other dtypes and empty inputs
run the eager composition; a tree used elsewhere does not fuse."""
import sys

import numpy as np
import pytest

import ember_autograd
import ember_tensor as torch
from ember_compile import compile, config
from ember_compile.fusion import FusedGroup
from ember_compile.joint import JointPlan
from ember_tensor.fusion import FusedReduction

pt = pytest.importorskip("torch")


def _groups(compiled):
    gm = compiled._ember_compiled_function.graph_modules[-1]
    return [n.target for n in gm.graph.nodes if isinstance(n.target, FusedGroup)]


def _reductions(compiled):
    return [g for g in _groups(compiled) if isinstance(g.program, FusedReduction)]


# (name, function of (x, y, w), written once for ember and PyTorch: the same methods)
CASES = [
    ("mse_mean", lambda x, y, w: ((x - y) ** 2).mean()),
    ("weighted_rows", lambda x, y, w: (x * w).sum(-1)),
    ("exp_rows", lambda x, y, w: x.exp().sum(dim=1)),
    ("rows_keepdim", lambda x, y, w: (x * 2.0 + y).mean(dim=-1, keepdim=True)),
    ("columns_keepdim", lambda x, y, w: (x.sigmoid() * y).sum(0, keepdim=True)),
    ("all_dims_tuple", lambda x, y, w: (x * y).sum((0, 1))),
    ("amax_rows", lambda x, y, w: (x + y).amax(-1)),
    ("amin_columns", lambda x, y, w: (x - w).amin(dim=0, keepdim=True)),
    ("amax_all", lambda x, y, w: x.abs().amax()),
    ("tree", lambda x, y, w: (x.tanh() * (y - 1.0) + (x * w).relu()).sum(-1)),
]


def _inputs(module, dtype, shape=(37, 53), transpose=False):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(shape[-1:])]
    tensors = [module.tensor(a, dtype=getattr(module, dtype)) for a in arrays]
    if transpose:  # non-contiguous: the same values read through transposed memory
        tensors[:2] = [module.tensor(np.ascontiguousarray(a.T), dtype=getattr(module, dtype)).t()
                       for a in arrays[:2]]
    return tensors


def _close(a, b, dtype):
    tol = 1e-5 if dtype == "float32" else 1e-12
    return np.allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_fused_reduction_equals_eager_and_pytorch(name, fn, dtype, transpose):
    compiled = compile(fn)
    args = _inputs(torch, dtype, transpose=transpose)
    got = compiled(*args)
    eager = fn(*args)
    assert got.shape == eager.shape and got.dtype == eager.dtype
    assert torch.equal(got, eager), name   # eager's blocks folded by eager's loop: its bits
    reference = fn(*_inputs(pt, dtype, transpose=transpose))
    assert tuple(reference.shape) == tuple(got.shape)
    assert _close(got.numpy(), reference.numpy(), dtype), name
    fused = _reductions(compiled)
    assert len(fused) == 1 and fused[0].calls == 1 and len(_groups(compiled)) == 1


@pytest.mark.parametrize("dim", [None, -1, 0, (0, 2)])
def test_large_and_three_dimensional_inputs(dim):
    # 400 * 5 * 100 elements: the threaded split; dims (0, 2) of 3-d: the packed layout.
    fn = (lambda x, y: (x * y).sum()) if dim is None else (lambda x, y: (x * y).sum(dim))
    compiled = compile(fn)
    x, y = _inputs(torch, "float32", shape=(400, 5, 100))[:2]
    assert torch.equal(compiled(x, y), fn(x, y))
    px, py = _inputs(pt, "float32", shape=(400, 5, 100))[:2]
    assert _close(compiled(x, y).numpy(), fn(px, py).numpy(), "float32")
    assert _reductions(compiled)[0].calls == 2


@pytest.mark.parametrize("ahead_of_time_backward", [False, True])
@pytest.mark.parametrize("name,fn", CASES[:6], ids=[c[0] for c in CASES[:6]])
def test_gradients_equal_eager_and_pytorch(name, fn, ahead_of_time_backward, monkeypatch):
    # Off: the group is one autograd.Function differentiating its eager composition; on:
    # the training call runs the lowered graph, the fused reduction recorded as its ops.
    monkeypatch.setattr(config, "ahead_of_time_backward", ahead_of_time_backward)
    compiled = compile(fn)
    args = [t.requires_grad_() for t in _inputs(torch, "float64")]
    out = compiled(*args)
    assert out.grad_fn is not None
    if ahead_of_time_backward:  # lowered: one node, the fused reduction recorded as its ops
        holder = compiled._ember_compiled_function
        plans = [p for joint in holder.joints if joint is not None for p in joint.plans.values()]
        assert [type(p) for p in plans] == [JointPlan] and type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    grads = ember_autograd.grad(out.sum(), args, allow_unused=True)
    eager_args = [t.detach().requires_grad_() for t in args]
    eager_grads = ember_autograd.grad(fn(*eager_args).sum(), eager_args, allow_unused=True)
    pt_args = [t.requires_grad_() for t in _inputs(pt, "float64")]
    pt_grads = pt.autograd.grad(fn(*pt_args).sum(), pt_args, allow_unused=True)
    for g, e, p in zip(grads, eager_grads, pt_grads):
        assert (g is None) == (e is None) == (p is None)
        if g is not None:
            assert torch.equal(g, e), name
            assert _close(g.numpy(), p.numpy(), "float64"), name


def test_second_order_gradient_through_the_fused_reduction(monkeypatch):
    monkeypatch.setattr(config, "ahead_of_time_backward", False)
    fn = CASES[0][1]
    compiled = compile(fn)
    x, y, w = [t.requires_grad_() for t in _inputs(torch, "float64", shape=(4, 3))]
    (gx,) = ember_autograd.grad(compiled(x, y, w), [x], create_graph=True)
    (ggx,) = ember_autograd.grad(gx.sum(), [x])
    px, py, pw = [t.requires_grad_() for t in _inputs(pt, "float64", shape=(4, 3))]
    (pgx,) = pt.autograd.grad(fn(px, py, pw), [px], create_graph=True)
    (pggx,) = pt.autograd.grad(pgx.sum(), [px])
    assert _close(gx.detach().numpy(), pgx.detach().numpy(), "float64")
    assert _close(ggx.numpy(), pggx.numpy(), "float64")


@pytest.mark.parametrize("name,fn,shape", [
    ("sum_rows", lambda x: (x * 2.0).sum(-1), (0, 5)),
    ("mean_all", lambda x: (x * 2.0).mean(), (0, 5)),
    ("sum_empty_dim", lambda x: x.exp().sum(0), (0, 5)),
])
def test_empty_inputs_run_the_eager_composition(name, fn, shape):
    compiled = compile(fn)
    x = torch.zeros(shape)
    got = compiled(x)
    assert _close(got.numpy(), fn(pt.zeros(shape)).numpy(), "float32") and got.shape == fn(x).shape
    assert _reductions(compiled)[0].calls == 0


def test_empty_amax_raises_eagers_error():
    compiled = compile(lambda x: (x * 2.0).amax())
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
        compiled(torch.zeros(0, 3))


@pytest.mark.parametrize("kind", ["sum", "mean", "amax", "amin"])
def test_nan_propagates(kind):
    fn = lambda x: getattr(x * 1.0, kind)(-1)  # noqa: E731
    compiled = compile(fn)
    data = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    got = compiled(torch.tensor(data))
    assert _close(got.numpy(), fn(pt.tensor(data)).numpy(), "float64")
    assert np.isnan(got.numpy()[0]) and not np.isnan(got.numpy()[1])
    assert _reductions(compiled)[0].calls == 1


def test_a_tree_with_another_consumer_does_not_fuse_into_the_reduction():
    def fn(x, y):
        e = (x * y).exp()
        return e.sum(-1), e * 2.0

    compiled = compile(fn)
    x, y = _inputs(torch, "float32")[:2]
    got, eager = compiled(x, y), fn(x, y)
    assert all(torch.equal(a, b) for a, b in zip(got, eager))
    assert not _reductions(compiled)
    assert len(_groups(compiled)) == 1   # mul, exp and the second mul: an elementwise group


@pytest.mark.parametrize("dtype", [torch.int64, torch.float16])
def test_other_dtypes_run_the_eager_composition(dtype):
    fn = lambda x, y: (x * y + 1).sum(-1)  # noqa: E731
    compiled = compile(fn)
    x = torch.arange(12).reshape(3, 4).to(dtype)
    got = compiled(x, x)
    assert torch.equal(got, fn(x, x)) and got.dtype == fn(x, x).dtype
    px = pt.arange(12).reshape(3, 4).to(getattr(pt, str(dtype).split(".")[1]))
    assert np.allclose(got.float().numpy(), fn(px, px).float().numpy())
    assert _reductions(compiled)[0].calls == 0


def test_mixed_dtypes_and_a_dtype_argument_do_not_run_the_kernel():
    mixed = compile(lambda x, y: (x * y).sum())
    x, y = torch.randn(3, 4), torch.randn(3, 4, dtype=torch.float64)
    assert torch.equal(mixed(x, y), (x * y).sum()) and _reductions(mixed)[0].calls == 0
    with_dtype = compile(lambda x: (x * 2.0).sum(dtype=torch.float64))
    assert torch.equal(with_dtype(x), (x * 2.0).sum(dtype=torch.float64))
    assert not _reductions(with_dtype)   # dtype= is the eager op's: not fused


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator (its tox env sets the simulator)")
@pytest.mark.parametrize("name,fn", [CASES[0], CASES[1], CASES[7]], ids=[CASES[i][0] for i in (0, 1, 7)])
def test_cuda_tensors_run_the_fused_reduction(name, fn):
    compiled = compile(fn)
    args = [t.cuda() for t in _inputs(torch, "float32", shape=(3, 5))]
    got = compiled(*args)
    assert got.device.type == "cuda"
    assert torch.equal(got.cpu(), fn(*args).cpu()), name   # eager CUDA's kernels, eager's bits
    assert _close(got.cpu().numpy(), fn(*_inputs(pt, "float32", shape=(3, 5))).numpy(), "float32")
    assert _reductions(compiled)[0].calls == 1


def test_one_compiled_kernel_per_group_and_dtype():
    # Shapes, strides and broadcasting are runtime arguments of the one generated loop.
    fn = lambda x, y, w: (x * y - w).sum(-1)  # noqa: E731
    compiled = compile(fn, dynamic=True)
    for shape, transpose in [((3, 4), False), ((5, 7), True), ((2, 3, 4), False), ((300, 500), True)]:
        args = _inputs(torch, "float32", shape=shape, transpose=transpose)
        assert torch.equal(compiled(*args), fn(*args))
    group = _reductions(compiled)[0]
    assert group.calls == 4
    module = sys.modules[group.program.kernel_name(torch.float32)]   # the generated module
    assert len(module.rows.signatures) == 1 and len(module.part.signatures) <= 1


def test_the_log_shows_the_fused_reduction_and_its_kernel(capsys):
    compiled = compile(lambda x, y: ((x - y) ** 2).mean(), options={"trace.fusion": True, "trace.code": True})
    x, y = _inputs(torch, "float32")[:2]
    compiled(x, y)
    err = capsys.readouterr().err
    assert "fused_reduction_0: 2 ops" in err and "mean = pow_1.mean()" in err
    assert "T(square(t0))" in err and "# reduced in the loop: mean(dim=None, keepdim=False)" in err


# Reduction epilogues: the elementwise chain on a fused reduction's result runs in its kernel.
EPILOGUE_CASES = [
    ("sum_scaled", lambda x, y, w: (x * w).sum(-1) * 2 + 1),
    ("rms", lambda x, y, w: ((x - y) ** 2).mean().sqrt()),
    ("mean_rows_sqrt", lambda x, y, w: (x * x).mean(-1).sqrt()),
    ("columns_keepdim_log", lambda x, y, w: x.exp().sum(0, keepdim=True).log()),
    ("amax_tanh_scaled", lambda x, y, w: (x + y).amax(-1).tanh() * 0.5),
    ("all_dims_reciprocal", lambda x, y, w: (x * y).sum((0, 1)).reciprocal()),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("name,fn", EPILOGUE_CASES, ids=[c[0] for c in EPILOGUE_CASES])
def test_reduction_epilogues_equal_eager_and_pytorch(name, fn, dtype, transpose):
    compiled = compile(fn)
    args = _inputs(torch, dtype, transpose=transpose)
    got, eager = compiled(*args), fn(*args)
    assert got.shape == eager.shape and got.dtype == eager.dtype
    assert np.array_equal(got.numpy(), eager.numpy(), equal_nan=True), name   # eager's bits
    assert _close(got.numpy(), fn(*_inputs(pt, dtype, transpose=transpose)).numpy(), dtype), name
    (group,) = _groups(compiled)   # the tree, the reduction and the chain: one kernel
    assert isinstance(group.program, FusedReduction) and group.program.epilogue is not None
    assert group.calls == 1


@pytest.mark.parametrize("ahead_of_time_backward", [False, True])
@pytest.mark.parametrize("name,fn", EPILOGUE_CASES[:3], ids=[c[0] for c in EPILOGUE_CASES[:3]])
def test_reduction_epilogue_gradients_equal_eager(name, fn, ahead_of_time_backward, monkeypatch):
    monkeypatch.setattr(config, "ahead_of_time_backward", ahead_of_time_backward)
    compiled = compile(fn)
    args = [t.requires_grad_() for t in _inputs(torch, "float64")]
    grads = ember_autograd.grad(compiled(*args).sum(), args, allow_unused=True)
    eager_args = [t.detach().requires_grad_() for t in args]
    eager_grads = ember_autograd.grad(fn(*eager_args).sum(), eager_args, allow_unused=True)
    for g, e in zip(grads, eager_grads):
        assert (g is None) == (e is None)
        assert g is None or torch.equal(g, e), name


def test_what_does_not_join_a_reduction_as_its_epilogue():
    cases = [lambda x, y: (x * y).sum(-1) * y.sum(),          # a second tensor in the chain
             lambda x, y: ((x * y).sum(-1) > 0.0),              # a comparison
             lambda x, y: [s := (x * y).sum(-1), s * 2.0][1] + s]   # the result used twice
    for fn in cases:
        compiled = compile(fn)
        x, y = _inputs(torch, "float32")[:2]
        assert torch.equal(compiled(x, y), fn(x, y))
        assert all(g.program.epilogue is None for g in _reductions(compiled))
    fallback = compile(lambda x: (x * 2).sum(-1) * 2 + 1)   # integers: the eager composition
    x = torch.arange(12).reshape(3, 4)
    assert torch.equal(fallback(x), (x * 2).sum(-1) * 2 + 1) and _reductions(fallback)[0].calls == 0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator (its tox env sets the simulator)")
@pytest.mark.parametrize("name,fn", [EPILOGUE_CASES[0], EPILOGUE_CASES[1]], ids=[EPILOGUE_CASES[i][0] for i in (0, 1)])
def test_cuda_reduction_epilogues(name, fn):
    compiled = compile(fn)
    args = [t.cuda() for t in _inputs(torch, "float32", shape=(3, 5))]
    got = compiled(*args)
    assert got.device.type == "cuda" and torch.equal(got.cpu(), fn(*args).cpu()), name
    assert _reductions(compiled)[0].calls == 1 and _reductions(compiled)[0].program.epilogue is not None
