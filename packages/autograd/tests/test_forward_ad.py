"""autograd.forward_ad against PyTorch's: the same function, primal and tangent in both,
the tangents of the outputs compared (float64)."""
import numpy as np
import pytest

import ember_tensor as et
from ember_autograd import forward_ad as fw

torch = pytest.importorskip("torch")
tfw = torch.autograd.forward_ad

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
VA = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 2))
VB = RNG.standard_normal((4, 2))
Z = A[0] + 1j * A[1]
VZ = VA[0] - 1j * VA[2]


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def run_both(fn, *pairs):
    """Tangents of fn's outputs, ember's and torch's, for inputs given as (primal, tangent)
    numpy pairs (a tangent of None: not dual)."""
    results = []
    for lib, fwad in ((et, fw), (torch, tfw)):
        with fwad.dual_level():
            inputs = [lib.tensor(p) if v is None else fwad.make_dual(lib.tensor(p), lib.tensor(v))
                      for p, v in pairs]
            outs = _as_list(fn(lib, *inputs))
            results.append([(np.asarray(fwad.unpack_dual(o).primal.tolist()),
                             fwad.unpack_dual(o).tangent) for o in outs])
    return results


def check(fn, *pairs):
    ours, theirs = run_both(fn, *pairs)
    assert len(ours) == len(theirs)
    for (p, t), (tp, tt) in zip(ours, theirs):
        np.testing.assert_allclose(p, tp, rtol=1e-12, atol=1e-12)
        assert (t is None) == (tt is None)
        if t is not None:
            np.testing.assert_allclose(np.asarray(t.tolist()), tt.numpy(), rtol=1e-10, atol=1e-12)


CASES = {
    "mul_self": (lambda L, x: x * x, [(A, VA)]),
    "sin_exp": (lambda L, x: x.sin() * x.exp(), [(A, VA)]),
    "tanh_sigmoid": (lambda L, x: L.tanh(x) + L.sigmoid(x), [(A, VA)]),
    "div_pow": (lambda L, x: (x ** 2 + 1) / (x.abs() + 2), [(A, VA)]),
    "binary_both_dual": (lambda L, x, y: x * y - y / (x * x + 1), [(A, VA), (A.T.copy().T, VA[::-1].copy())]),
    "binary_one_dual": (lambda L, x, y: x * y + x, [(A, VA), (A + 1, None)]),
    "broadcast": (lambda L, x, y: x + y, [(A, VA), (A[0].copy(), VA[1].copy())]),
    "matmul": (lambda L, x, y: x @ y, [(A, VA), (B, VB)]),
    "matmul_one_dual": (lambda L, x, y: L.matmul(x, y), [(A, None), (B, VB)]),
    "sum": (lambda L, x: x.sum(), [(A, VA)]),
    "sum_dim": (lambda L, x: x.sum(1, keepdim=True), [(A, VA)]),
    "mean": (lambda L, x: x.mean(0), [(A, VA)]),
    "max_dim": (lambda L, x: x.max(1), [(A, VA)]),
    "softmax": (lambda L, x: L.softmax(x, 1), [(A, VA)]),
    "view": (lambda L, x: x.view(4, 3), [(A, VA)]),
    "transpose": (lambda L, x: x.transpose(0, 1) * 2, [(A, VA)]),
    "slicing": (lambda L, x: x[1:, ::2], [(A, VA)]),
    "index_tensor": (lambda L, x: x[L.tensor([2, 0])], [(A, VA)]),
    "reshape_unsqueeze": (lambda L, x: x.reshape(-1).unsqueeze(0), [(A, VA)]),
    "cat_split": (lambda L, x, y: L.cat([x, y]).split(2), [(A, VA), (A * 2, None)]),
    "argmax_compare": (lambda L, x: (x.argmax(), x > 0), [(A, VA)]),
    "detach": (lambda L, x: x.detach(), [(A, VA)]),
    "complex": (lambda L, x: ((x * x).exp(), x.abs(), (x.conj() * x).real), [(Z, VZ)]),
    "inplace_mul": (lambda L, x: x.clone().mul_(3), [(A, VA)]),
    "inplace_into_plain": (lambda L, x: L.zeros(3, 4, dtype=L.float64).add_(x.exp()), [(A, VA)]),
    "inplace_zero_clamp": (lambda L, x: (x.clone().zero_(), x.clone().clamp_(max=0.2)), [(A, VA)]),
    "inplace_geometry": (lambda L, x: (x.clone().t_(), x.clone().unsqueeze_(0)), [(A, VA)]),
    "copy_plain_into_dual": (lambda L, x: x.clone().copy_(L.ones(3, 4, dtype=L.float64)), [(A, VA)]),
    "stack_unbind_where": (lambda L, x: (*L.stack([x, x * 2]).unbind(0), L.where(x > 0, x, x * x)), [(A, VA)]),
    "expand_cast": (lambda L, x: (x.expand(2, 3, 4).sum(0), x.float().double()), [(A, VA)]),
    "inplace_through_view": (lambda L, x: _write_view(x), [(A, VA)]),
    "inplace_view_of_plain": (lambda L, x: _copy_into_view(L, x), [(A, VA)]),
}


def _write_view(x):
    y = x.clone()
    y[1].mul_(5)
    return y


def _copy_into_view(L, x):
    z = L.zeros(3, 4, dtype=L.float64)
    z[:, 1:3].copy_(x[:, :2])
    return z


@pytest.mark.parametrize("name", list(CASES))
def test_tangents_match_torch(name):
    fn, pairs = CASES[name]
    check(fn, *pairs)


def test_inplace_updates_the_given_tangent_in_place():
    v = et.tensor(VA)
    with fw.dual_level():
        d = fw.make_dual(et.tensor(A), v)
        d.mul_(2)
        assert fw.unpack_dual(d).tangent is v
    np.testing.assert_allclose(np.asarray(v.tolist()), 2 * VA)


def test_unpack_non_dual_and_outside_level():
    x = et.tensor(A)
    primal, tangent = fw.unpack_dual(x)
    assert primal is x and tangent is None
    with fw.dual_level():
        assert fw.unpack_dual(x).tangent is None
        unpacked = fw.unpack_dual(fw.make_dual(x, et.tensor(VA)))
        assert isinstance(unpacked, fw.UnpackedDualTensor)
        assert fw.unpack_dual(unpacked.primal).tangent is None
        np.testing.assert_allclose(np.asarray(unpacked.primal.tolist()), A)


def test_level_exit_clears_tangents():
    with fw.dual_level() as level:
        assert level == 0
        d = fw.make_dual(et.tensor(A), et.tensor(VA))
        y = d * 2
    assert fw.unpack_dual(d).tangent is None and fw.unpack_dual(y).tangent is None
    with fw.dual_level():
        assert fw.unpack_dual(y).tangent is None
        assert fw.unpack_dual(y * 3).tangent is None


def test_dual_is_backward_differentiable():
    x = et.tensor(A, requires_grad=True)
    with fw.dual_level():
        y = (fw.make_dual(x, et.tensor(VA)) ** 2).sum()
        y.backward()
        assert fw.unpack_dual(y).tangent.item() == pytest.approx(float((2 * A * VA).sum()))
    np.testing.assert_allclose(np.asarray(x.grad.tolist()), 2 * A)


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


ERRORS = {
    "make_dual_outside": lambda L, F: F.make_dual(L.ones(2), L.ones(2)),
    "exit_outside": lambda L, F: F.exit_dual_level(),
    "nested": lambda L, F: _in_level(F, F.enter_dual_level),
    "size": lambda L, F: _in_level(F, lambda: F.make_dual(L.ones(2), L.ones(3))),
    "int_primal": lambda L, F: _in_level(F, lambda: F.make_dual(L.ones(2, dtype=L.int64), L.ones(2))),
    "int_tangent": lambda L, F: _in_level(F, lambda: F.make_dual(L.ones(2), L.ones(2, dtype=L.int64))),
    "dual_of_dual": lambda L, F: _in_level(F, lambda: F.make_dual(F.make_dual(L.ones(2), L.ones(2)), L.ones(2))),
    "exit_wrong_level": lambda L, F: _in_level(F, lambda: F.exit_dual_level(level=3)),
    "make_dual_wrong_level": lambda L, F: _in_level(F, lambda: F.make_dual(L.ones(2), L.ones(2), level=2)),
}


def _in_level(F, fn):
    with F.dual_level():
        fn()


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    assert _message(lambda: ERRORS[name](et, fw)) == _message(lambda: ERRORS[name](torch, tfw))
    assert fw._current_level == -1  # every error path left no level open
