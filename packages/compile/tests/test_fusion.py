"""Fusion: elementwise chains of a captured graph become one generated kernel whose
results equal eager ember's bit for bit and whose gradients equal eager's; other dtypes
run the eager composition; kernels are cached on disk (a second process compiles
nothing); the log prints the graph, the groups and the kernel source."""
import os
import subprocess
import sys
import textwrap

import pytest

import ember_autograd
import ember_nn as nn
import ember_tensor as torch
from ember_compile import compile, config
from ember_compile.fusion import FusedGroup


def _groups(compiled):
    holder = compiled._compiled_function if isinstance(compiled, nn.Module) else compiled._ember_compiled_function
    gm = holder.graph_modules[-1]
    return [n.target for n in gm.graph.nodes if isinstance(n.target, FusedGroup)]


def chain(x, y, z, c):
    a = torch.sigmoid(x * y + z) - 0.25
    b = torch.where(c, torch.tanh(a), torch.exp(-a)) / 3.0
    return torch.relu(b * x).log1p() + a.neg()


def _inputs(dtype, shape_y=(4, 5), requires_grad=False):
    torch.manual_seed(1)
    x = torch.randn(4, 5, dtype=dtype, requires_grad=requires_grad)
    y = torch.randn(shape_y, dtype=dtype, requires_grad=requires_grad)
    z = torch.randn(4, 5, dtype=dtype).t().contiguous().t()  # non-contiguous: the strided loop
    c = torch.randn(4, 5) > 0
    return x, y, z, c


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape_y", [(4, 5), (1, 5), (5,), ()])
def test_fused_results_equal_eager_bit_for_bit(dtype, shape_y):
    compiled = compile(chain)
    args = _inputs(dtype, shape_y)
    assert torch.equal(compiled(*args), chain(*args))
    groups = _groups(compiled)
    assert len(groups) == 1 and groups[0].calls == 1 and len(groups[0].program.steps) == 14


@pytest.mark.parametrize("ahead_of_time_backward", [False, True])
def test_gradients_equal_eager_through_the_fused_group(ahead_of_time_backward, monkeypatch):
    # Off: the group is one autograd.Function (its backward differentiates the eager
    # composition); on: training calls run the lowered graph (`joint`), groups as their ops.
    monkeypatch.setattr(config, "ahead_of_time_backward", ahead_of_time_backward)
    compiled = compile(chain)
    for shape_y in [(4, 5), (1, 5)]:  # broadcasting: the gradient is summed back
        x, y, z, c = _inputs(torch.float64, shape_y, requires_grad=True)
        out = compiled(x, y, z, c)
        assert out.grad_fn is not None
        gx, gy = ember_autograd.grad(out.sum(), [x, y])
        ex, ey = ember_autograd.grad(chain(x, y, z, c).sum(), [x, y])
        assert torch.allclose(gx, ex, rtol=1e-12) and torch.allclose(gy, ey, rtol=1e-12)
    # twice differentiable: backward differentiates ember's ops
    x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    f = compile(lambda x: torch.tanh(x * x) * 2.0)
    (g,) = ember_autograd.grad(f(x).sum(), x, create_graph=True)
    (gg,) = ember_autograd.grad(g.sum(), x)
    x2 = x.detach().requires_grad_()
    (e,) = ember_autograd.grad((torch.tanh(x2 * x2) * 2.0).sum(), x2, create_graph=True)
    (ee,) = ember_autograd.grad(e.sum(), x2)
    assert torch.allclose(g, e) and torch.allclose(gg, ee)
    assert _groups(compiled)[0].calls == (0 if ahead_of_time_backward else 1)  # the last graph (y (1, 5))


def test_other_dtypes_run_the_eager_composition():
    compiled = compile(lambda x, y: (x * y + 3) * x)
    x, y = torch.arange(6).view(2, 3), torch.arange(6).view(2, 3)
    assert torch.equal(compiled(x, y), (x * y + 3) * x)
    (group,) = _groups(compiled)
    assert group.calls == 0
    half = torch.ones(3, dtype=torch.float16)
    assert torch.equal(compiled(half, half), (half * half + 3) * half)


def test_only_elementwise_chains_are_fused_and_shared_values_end_a_group():
    def f(x, w):
        h = torch.relu(x @ w + 1.0)     # matmul stays ember's; add + relu fuse
        s = h.sum()                      # a reduction stays
        t = torch.exp(h) * 2.0           # h has two users: exp+mul is a group of its own
        return t + s

    compiled = compile(f)
    x, w = torch.randn(3, 4), torch.randn(4, 2)
    assert torch.equal(compiled(x, w), f(x, w))
    groups = _groups(compiled)
    assert sorted(len(g.program.steps) for g in groups) == [2, 3]


def test_modules_relu_is_fused_and_a_model_trains_as_eager():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2), nn.Sigmoid())

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = model

        def forward(self, x):
            return self.body(x) * 2.0 - 1.0

    compiled = compile(Scaled())
    x = torch.randn(5, 4)
    out = compiled(x)
    out.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    Scaled().forward(x).sum().backward()
    assert torch.equal(out, Scaled().forward(x))
    assert all(torch.allclose(a, p.grad) for a, p in zip(grads, model.parameters()))
    assert [len(g.program.steps) for g in _groups(compiled)] == [3]  # Sigmoid * 2 - 1


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA and no simulator (its tox env sets the simulator)")
def test_cuda_tensors_run_the_same_program():
    compiled = compile(chain)
    args = _inputs(torch.float32)
    on_gpu = [a.cuda() for a in args]
    result = compiled(*on_gpu)
    assert result.device == on_gpu[0].device and torch.equal(result, chain(*on_gpu))
    assert torch.allclose(result.cpu(), chain(*args))
    assert _groups(compiled)[0].calls == 1


def test_the_log_shows_the_graph_the_groups_and_the_kernel(capsys):
    compiled = compile(lambda x, y: torch.relu(x * y + 1.0),
                       options={"trace.graph": True, "trace.fusion": True, "trace.code": True})
    compiled(torch.ones(2), torch.ones(2))
    err = capsys.readouterr().err
    assert "captured graph" in err and "1 fused group(s)" in err
    assert "t1 = T(add(t0, T(1.0)))" in err and "t2 = T(relu(t1))" in err


_CHILD = textwrap.dedent("""
    import ember_tensor as torch
    from ember_compile import compile
    from ember_compile.fusion import FusedGroup
    f = compile(lambda x, y: torch.tanh(x * y - 0.125) * 3.0)
    f(torch.ones(8), torch.ones(8))
    gm = f._ember_compiled_function.graph_modules[-1]
    (group,) = [n.target for n in gm.graph.nodes if isinstance(n.target, FusedGroup)]
    import sys
    module = sys.modules[group.program.kernel_name(torch.float32)]
    stats = module.cc.stats
    print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
""")


def test_kernels_are_cached_on_disk_for_the_next_process(tmp_path):
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path))
    runs = [subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    first, second = (run.stdout.split() for run in runs)
    assert first == ["0", "1"]   # compiled (a cache miss) in the first process
    assert second == ["1", "0"]  # loaded from disk in the second
    assert list(tmp_path.glob("kernels-*/ember_fused_*.py"))
