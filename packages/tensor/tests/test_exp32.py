"""The CPU kernels' float32 exp, sigmoid, tanh and log (`_backends.cpu.kernels.exp32`): edge
values, accuracy against float64 on a dense sweep of float32 inputs, eager ops computing
with them (and float64 keeping libm), and the disk-cache key of the kernel files that link
them (`cache_keys.key_by_sources`)."""
import doctest
import math
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba import njit

import ember_tensor as et
from ember_tensor._backends.cpu.kernels import cache_keys, exp32, row_passes, scalar_functions

INF, NAN = math.inf, math.nan
FLOAT32_MAX = float(np.finfo(np.float32).max)
ROUNDS_TO_INF = 3.4028235677973366e38  # FLOAT32_MAX + half its ulp: the rounding boundary


def _sigmoid64(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _tanh64(x):
    return math.tanh(x)


def _exp64(x):
    return math.exp(x) if x < 709 else INF


def _log64(x):
    return math.log(x)


FUNCTIONS = {"exp": (exp32.exp32, _exp64), "sigmoid": (exp32.sigmoid32, _sigmoid64),
             "tanh": (exp32.tanh32, _tanh64), "log": (exp32.log32, _log64),
             "exp_rows": (exp32.exp32_rows, _exp64)}


def _loop(fn):
    # The functions as the kernels use them: inlined into a loop LLVM vectorises.
    @njit
    def apply(x, out):
        for i in range(x.shape[0]):
            out[i] = fn(x[i])
    return apply


_LOOPS = {name: _loop(fn) for name, (fn, _) in FUNCTIONS.items()}


def _apply(name, values):
    x = np.asarray(values, np.float32)
    out = np.empty_like(x)
    _LOOPS[name](x, out)
    return out


def _bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


# (function, input, expected): expected float32 values, NaN meaning any NaN, REF the
# float64 function's value at the float32 input rounded once to float32 (the denormal
# results of exp among them: PyTorch's exp gives the same).
REF = "float64 rounded once"
EDGES = [
    ("exp", 0.0, 1.0), ("exp", -0.0, 1.0), ("exp", INF, INF), ("exp", -INF, 0.0), ("exp", NAN, NAN),
    ("exp", 1.0, REF), ("exp", 88.72283, REF),
    ("exp", 88.7229, INF), ("exp", 89.0, INF), ("exp", 1e30, INF), ("exp", FLOAT32_MAX, INF),
    ("exp", -87.5, REF),  # below float32's smallest normal
    ("exp", -100.0, REF), ("exp", -103.27, REF),
    ("exp", -103.972, REF),  # the smallest denormal
    ("exp", -104.0, 0.0), ("exp", -1e30, 0.0), ("exp", -FLOAT32_MAX, 0.0),
    ("exp", 1e-30, 1.0), ("exp", -1e-30, 1.0), ("exp", 1e-45, 1.0),
    ("sigmoid", 0.0, 0.5), ("sigmoid", -0.0, 0.5), ("sigmoid", INF, 1.0), ("sigmoid", -INF, 0.0),
    ("sigmoid", NAN, NAN), ("sigmoid", 17.0, REF), ("sigmoid", 40.0, 1.0),
    ("sigmoid", -90.0, REF), ("sigmoid", -105.0, 0.0),
    ("sigmoid", FLOAT32_MAX, 1.0), ("sigmoid", -FLOAT32_MAX, 0.0),
    ("tanh", 0.0, 0.0), ("tanh", -0.0, -0.0), ("tanh", INF, 1.0), ("tanh", -INF, -1.0), ("tanh", NAN, NAN),
    ("tanh", 1e-30, 1e-30), ("tanh", -1e-40, -1e-40), ("tanh", 0.0625, REF),
    ("tanh", 0.06249999, REF), ("tanh", 9.1, 1.0),
    ("tanh", -FLOAT32_MAX, -1.0),
    ("log", 1.0, 0.0), ("log", 0.0, -INF), ("log", -0.0, -INF), ("log", INF, INF), ("log", NAN, NAN),
    ("log", -1.0, NAN), ("log", -INF, NAN), ("log", -1e-45, NAN), ("log", 2.0, REF), ("log", 0.5, REF),
    ("log", 1e-45, REF), ("log", 1e-40, REF), ("log", 1.17549435e-38, REF), ("log", FLOAT32_MAX, REF),
    ("log", 1.0000001, REF), ("log", 0.99999994, REF), ("log", 1.4142135, REF), ("log", 1.4142137, REF),
    # The softmax rows' float32 evaluation: the same edges (its values are within 1 ulp,
    # not always exp32's, so only exact cases here; the sweep below covers the rest).
    ("exp_rows", 0.0, 1.0), ("exp_rows", -0.0, 1.0), ("exp_rows", INF, INF), ("exp_rows", -INF, 0.0),
    ("exp_rows", NAN, NAN), ("exp_rows", 88.7229, INF), ("exp_rows", 1e30, INF), ("exp_rows", FLOAT32_MAX, INF),
    ("exp_rows", -103.972, REF),  # the smallest denormal, rounded once
    ("exp_rows", -104.0, 0.0), ("exp_rows", -1e30, 0.0), ("exp_rows", -FLOAT32_MAX, 0.0),
    ("exp_rows", 1e-30, 1.0), ("exp_rows", -1e-30, 1.0),
]


@pytest.mark.parametrize("name, x, expected", EDGES, ids=[f"{n}({x})" for n, x, _ in EDGES])
def test_edge_values(name, x, expected):
    got = _apply(name, [x])[0]
    if expected is REF:
        expected = np.float32(FUNCTIONS[name][1](float(np.float32(x))))
    if math.isnan(expected):
        assert np.isnan(got)
    else:  # bit for bit: the sign of a zero counts
        assert _bits(got) == _bits(expected), (got, expected)


def _ulp_errors(name, x):
    """|f(x) - exact| in units of the last place of the exact value's float32 binade."""
    got = _apply(name, x).astype(np.float64)
    if name in ("exp", "exp_rows"):
        exact = np.exp(x.astype(np.float64))
    elif name == "log":
        exact = np.log(x.astype(np.float64))
    else:
        exact = np.array([FUNCTIONS[name][1](float(v)) for v in x])
    finite = np.abs(exact) < ROUNDS_TO_INF
    assert np.array_equal(got[~finite], np.copysign(np.inf, exact[~finite]))
    ulp = np.ldexp(1.0, np.maximum(np.frexp(exact[finite])[1] - 24, -149))
    return np.abs(got[finite] - exact[finite]) / ulp


# Every 4096th float32 of each function's range (its ends reach float32's inf, 0 and
# denormals), and every 7th one of +-[0.05, 0.08], around tanh's switch to its series.
SWEEPS = {"exp": (-104.0, 89.0), "sigmoid": (-105.0, 20.0), "tanh": (-10.0, 10.0), "log": (0.0, FLOAT32_MAX)}


def _dense_sweep(lo, hi, step=4096):
    positive = np.arange(0, int(_bits(hi)) + 1, step, dtype=np.uint32)
    negative = np.arange(0, int(_bits(-lo)) + 1, step, dtype=np.uint32) | np.uint32(0x80000000)
    near_switch = np.arange(int(_bits(0.05)), int(_bits(0.08)), 7, dtype=np.uint32)
    return np.concatenate([positive, negative, near_switch, near_switch | np.uint32(0x80000000)]).view(np.float32)


@pytest.mark.parametrize("name", list(SWEEPS))
def test_accuracy_within_half_an_ulp_and_a_bit(name):
    x = _dense_sweep(*SWEEPS[name])
    if name == "log":  # every 4096th positive float32, from the denormals up
        x = x[x > 0]
    errors = _ulp_errors(name, x) if name in ("exp", "log") else _ulp_errors(name, x[::8])
    # Rounded once from float64, so correctly rounded but for near-ties: well within
    # the 1 ulp asked of them (exhaustive sweeps: 0.5013, 0.5013, 0.5035, log 0.5).
    assert errors.max() <= 0.51, (name, errors.max(), x[np.argmax(errors)])


def test_the_softmax_rows_exp_is_within_one_ulp():
    # A float32 evaluation (softmax's and cross entropy's exp): every 7th float32 of
    # [-104.5, 89.5] measured at most 1.0103 ulp; denormals and the ends included here.
    x = _dense_sweep(-104.0, 89.0, step=512)
    errors = _ulp_errors("exp_rows", x)
    assert errors.max() <= 1.02, (errors.max(), x[np.argmax(errors)])


def _exp_rows_scaled(monkeypatch, by_ldexp):
    """exp32_rows(values) compiled anew with 2**n applied by one ldexp (AVX-512's way) or
    by two exact powers (elsewhere)."""
    monkeypatch.setattr(exp32, "_SCALE_BY_LDEXP", by_ldexp)
    return _loop(njit(exp32.exp32_rows.py_func))


def test_the_softmax_rows_exp_is_the_same_by_ldexp_or_two_powers(monkeypatch):
    # Either way p 2**n is rounded once: the same bits on the sweep, the over- and
    # underflow ends, the denormal range, specials and random bit patterns (NaNs too).
    x = np.concatenate([_dense_sweep(-110.0, 95.0, step=1024),
                        np.float32([INF, -INF, NAN, 0.0, -0.0, 88.72283, 88.7229, -87.33655, -103.97, -103.98]),
                        np.random.default_rng(5).integers(0, 2**32, 200_000, dtype=np.uint32).view(np.float32)])
    results = []
    for by_ldexp in (True, False):
        out = np.empty_like(x)
        _exp_rows_scaled(monkeypatch, by_ldexp)(x, out)
        results.append(out)
    ldexp, powers = results
    assert np.isnan(ldexp).sum() == np.isnan(x).sum() == np.isnan(powers).sum()
    np.testing.assert_array_equal(ldexp.view(np.uint32)[~np.isnan(x)], powers.view(np.uint32)[~np.isnan(x)])


EAGER_OPS = ["exp", "sigmoid", "tanh", "log"]


@pytest.mark.parametrize("op", EAGER_OPS)
@pytest.mark.parametrize("layout", ["contiguous", "strided", "0-d"])
def test_eager_float32_ops_compute_with_exp32(op, layout):
    values = np.concatenate([np.random.default_rng(1).standard_normal(997).astype(np.float32) * 30,
                             np.array([0, -0.0, INF, -INF, NAN, -100, 89, 1e-40], np.float32)])
    if layout == "0-d":
        got = np.array([getattr(et.tensor(values[k]), op)().numpy() for k in (0, -2)])
        expected = _apply(op, values[[0, -2]])
    else:
        if layout == "strided":  # every other element of a wider tensor
            t = et.from_numpy(np.stack([values, values], 1))[:, 0]
        else:
            t = et.from_numpy(values.copy())
        got, expected = getattr(t, op)().numpy(), _apply(op, values)
    assert np.array_equal(_bits(got), _bits(expected))


@pytest.mark.parametrize("op", EAGER_OPS)
def test_eager_float64_keeps_libm(op):
    values = np.random.default_rng(2).standard_normal(101) * 30
    values = np.abs(values) if op == "log" else values
    got = getattr(et.from_numpy(values), op)().numpy()
    reference = {"exp": math.exp, "sigmoid": _sigmoid64, "tanh": math.tanh, "log": math.log}[op]
    assert np.array_equal(got, np.array([reference(v) for v in values]))


def test_scalar_functions_swap_only_the_float32_transcendentals():
    from ember_tensor._backends import scalar
    for name in EAGER_OPS:
        assert getattr(scalar_functions, name) is not getattr(scalar, name)
    for name in ("add", "log2", "expm1", "where", "sqrt"):
        assert getattr(scalar_functions, name) is getattr(scalar, name)


SPECIALS = np.array([0.0, -0.0, 1.0, -1.0, INF, -INF, NAN, 88.72, 88.73, -87.0, -88.0, -95.0, -100.0,
                     -103.9, -104.0, 1e-30, -1e-40, 0.5, 10.0, -10.0, 20.5, 1e-45, 2.7182817,
                     FLOAT32_MAX, 0.99999994, 1.0000001], np.float32)


# Bits apart from PyTorch's float32 result allowed on SPECIALS: its sigmoid divides by
# 1 + exp(-x) rounded to float32, 1 ulp off the correctly rounded value at times (-10).
PYTORCH_ULPS = {"exp": 0, "tanh": 0, "sigmoid": 1, "log": 0}


@pytest.mark.parametrize("op", EAGER_OPS)
def test_special_values_match_pytorch(op):
    torch = pytest.importorskip("torch")
    got = getattr(et.from_numpy(SPECIALS.copy()), op)().numpy()
    expected = getattr(torch, op)(torch.from_numpy(SPECIALS.copy())).numpy()
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan)
    keep = ~nan
    if op == "sigmoid":
        # PyTorch's gives 0 once exp(-x) overflows float32 (x < -88.72), where ember's
        # gives the correctly rounded denormal.
        keep &= SPECIALS >= -88.72
    apart = np.abs(_bits(got[keep]).astype(np.int64) - _bits(expected[keep]).astype(np.int64))
    assert apart.max() <= PYTORCH_ULPS[op], SPECIALS[keep][apart > PYTORCH_ULPS[op]]


def test_module_examples():
    for module in (exp32, cache_keys, row_passes):
        assert doctest.testmod(module).failed == 0


_DEPENDENCY = "from numba import njit\n\n\n@njit(cache=True)\ndef value():\n    return {}\n"
_KERNELS = textwrap.dedent("""\
    from numba import njit
    from ember_tensor._backends.cpu.kernels.cache_keys import key_by_sources
    import dependency

    @njit(cache=True)
    def plain():
        return dependency.value()

    @njit(cache=True)
    def keyed():
        return dependency.value()

    key_by_sources([keyed], [dependency.__file__])
    print(plain(), keyed())
""")


def test_keyed_kernels_recompile_when_a_linked_file_changes(tmp_path):
    # Two processes share Numba's disk cache; between them only the file the kernels
    # link changes. The plain kernel shows Numba's own key missing that change.
    (tmp_path / "kernels.py").write_text(_KERNELS)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    outputs = []
    for second, value in enumerate((1, 22)):
        # (Another length and mtime: the linked function's own cache entry is keyed by its
        # file's size and mtime, which two writes within one second could share.)
        dependency = tmp_path / "dependency.py"
        dependency.write_text(_DEPENDENCY.format(value))
        os.utime(dependency, (1_700_000_000 + 100 * second, 1_700_000_000 + 100 * second))
        run = subprocess.run([sys.executable, str(tmp_path / "kernels.py")], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout.split())
    assert outputs == [["1", "1"], ["1", "22"]]


def test_first_compiled_under_a_fastmath_caller_stays_exact(tmp_path):
    # A fresh process and Numba cache whose first float32 exp compiles inside softmax's
    # reassociating sums: exp32 must not inherit those flags (they turned its rounding
    # step into a no-op, every exp a power of two) nor cache such code.
    script = textwrap.dedent("""\
        import numpy as np
        from ember_tensor._backends.cpu.kernels import exp32, softmax
        x = np.array([[0.5, 1.0, 2.5]], np.float32)
        y = np.empty_like(x)
        softmax._rows_softmax(x, y)
        print(float(exp32.exp32(np.float32(1.0))), float(exp32.exp32(np.float32(2.5))), float(y[0, 0]))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), EMBER_CACHE_DIR=str(tmp_path / "ember"))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    e1, e25, softmax_first = (float(v) for v in run.stdout.split())
    assert e1 == float(np.float32(math.e)) and e25 == float(np.float32(math.exp(2.5)))
    expected = math.exp(0.5) / (math.exp(0.5) + math.exp(1.0) + math.exp(2.5))
    assert abs(softmax_first - expected) <= 1e-6 * expected
