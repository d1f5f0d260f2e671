"""The random sampling API's arguments: factory keywords (dtype, device, requires_grad,
generator, the default dtype), size forms, out=, the methods, the dispatcher, and
PyTorch 2.13's errors for bad arguments (where PyTorch is installed the oracle test checks
that it still raises them). CUDA tensors are sampled on the device by another engine
(Philox): test_random_properties.py checks both devices, test_cuda_philox.py the engine."""
import pytest

import ember_tensor as torch


# -- keywords, shapes, out=, methods, dispatch -----------------------------------------------


@pytest.mark.parametrize("fn", [torch.rand, torch.randn])
def test_factory_keywords(fn):
    assert fn(2, 3).shape == fn((2, 3)).shape == fn([2, 3]).shape == fn(torch.Size([2, 3])).shape
    assert fn(size=(2, 3)).shape == (2, 3)
    assert fn(()).shape == ()
    assert fn(0, 3).shape == (0, 3)
    assert fn(2).dtype == torch.float32
    assert fn(2, dtype=torch.float64).dtype == torch.float64
    assert fn(2, device="cpu").device == torch.device("cpu")
    x = fn(2, 3, requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert not fn(2).requires_grad


def test_factories_follow_the_default_dtype():
    torch.set_default_dtype(torch.float64)
    try:
        for x in (torch.rand(2), torch.randn(2), torch.normal(0., 1., (2,))):
            assert x.dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


def test_integer_factories_keywords():
    assert torch.randint(0, 10, (3,), dtype=torch.float32, requires_grad=True).requires_grad
    assert torch.randint(0, 2, (3,), dtype=torch.bool).dtype == torch.bool
    assert torch.randperm(4, dtype=torch.float64, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        torch.randint(0, 10, (3,), requires_grad=True)


def test_out_keyword():
    out = torch.empty(1)
    assert torch.rand(2, 3, out=out) is out and out.shape == (2, 3)
    out = torch.empty(2, dtype=torch.float64)
    assert torch.randn(2, out=out).dtype == torch.float64
    out = torch.empty(0, dtype=torch.int64)
    assert torch.randint(0, 5, (4,), out=out) is out and out.shape == (4,)
    assert torch.randperm(5, out=out) is out and sorted(out.tolist()) == [0, 1, 2, 3, 4]
    assert torch.multinomial(torch.ones(3), 2, out=out) is out and out.shape == (2,)
    out = torch.empty(3)
    assert torch.normal(torch.zeros(3), 1., out=out) is out
    with pytest.raises(RuntimeError, match=r"dtype Half does not match dtype of out parameter \(Double\)"):
        torch.randint(0, 10, (2,), dtype=torch.float16, out=torch.empty(2, dtype=torch.float64))


def test_methods_match_pytorch():
    for name in ("uniform_", "normal_", "random_", "bernoulli_", "exponential_", "geometric_",
                 "log_normal_", "cauchy_", "bernoulli", "multinomial"):
        assert hasattr(torch.Tensor, name), name
    for name in ("rand", "randn", "randint", "randperm", "normal", "poisson", "rand_like",
                 "randn_like", "randint_like"):
        assert not hasattr(torch.Tensor, name), name


def test_ops_go_through_the_dispatcher():
    ops = torch.operators()
    assert ops["uniform_"].inplace and ops["bernoulli_"].inplace and not ops["rand"].inplace
    seen = []

    def record(op, args, kwargs, redispatch):
        seen.append(op.name)
        return redispatch(op, args, kwargs)

    torch.register_wrapper(record)
    try:
        torch.rand(2)
        torch.zeros(2).normal_()
        torch.multinomial(torch.ones(2), 1)
    finally:
        torch.unregister_wrapper(record)
    assert seen[0] == "rand" and "normal_" in seen and "multinomial" in seen


# -- devices ---------------------------------------------------------------------------------------
# CUDA tensors are sampled on the device by another engine (Philox): test_random_properties.py
# checks what holds on both devices (moments, bounds, errors, no host copies), test_cuda_philox.py
# the engine (reproducible per seed, independent calls, layouts, launches).


# -- PyTorch's errors --------------------------------------------------------------------------------

# (code run with `t` bound to the framework, exception type, PyTorch 2.13's message)
ERRORS = [
    ("t.randint(5, 5, (3,))", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ("t.randint(3, 5)", TypeError, "randint(): argument 'size' (position 2) must be tuple of ints, not int"),
    ("t.randint(2.5, (3,))", TypeError, "randint(): argument 'high' (position 1) must be int, not float"),
    ("t.randint(0, 2**63, (3,))", ValueError, "Overflow when unpacking long long"),
    ("t.randint(0, 300, (3,), dtype=t.uint8)", RuntimeError, "to - 1 is out of bounds for unsigned char"),
    ("t.randint(-1, 3, (3,), dtype=t.uint8)", RuntimeError, "from is out of bounds for unsigned char"),
    ("t.randint(0, 3, (3,), dtype=t.bool)", RuntimeError, "to - 1 is out of bounds for bool"),
    ("t.randint(0, 2**17, (3,), dtype=t.float16)", RuntimeError, "to - 1 is out of bounds for c10::Half"),
    ("t.zeros(3, dtype=t.int16).random_(0, 2**16)", RuntimeError, "to - 1 is out of bounds for short int"),
    ("t.zeros(3, dtype=t.int8).random_(-200, 5)", RuntimeError, "from is out of bounds for signed char"),
    ("t.zeros(3).random_(0)", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=0 >= to=0"),
    ("t.zeros(3).random_(5, 3)", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"),
    ("t.rand(2, dtype=t.int64)", NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("t.rand(2, dtype=t.bool)", NotImplementedError, "\"check_uniform_bounds\" not implemented for 'Bool'"),
    ("t.randn(2, dtype=t.int64)", NotImplementedError, "\"normal_kernel_cpu\" not implemented for 'Long'"),
    ("t.rand_like(t.zeros(2, dtype=t.int64))", NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("t.rand(2, -1)", RuntimeError, "Trying to create tensor with negative dimension -1: [2, -1]"),
    ("t.randperm(-1)", RuntimeError, "Trying to create tensor with negative dimension -1: [-1]"),
    ("t.randperm(5, dtype=t.bool)", NotImplementedError, "\"randperm\" not implemented for 'Bool'"),
    ("t.randperm(257, dtype=t.uint8)", RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("t.randperm(2050, dtype=t.float16)", RuntimeError, "n cannot be greater than 2049 for Half type."),
    ("t.randperm(5.0)", TypeError, "randperm(): argument 'n' (position 1) must be int, not float"),
    ("t.normal(0., -1., (3,))", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("t.normal(t.zeros(3), -1.)", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("t.normal(t.zeros(3), float('nan'))", RuntimeError, "normal expects std >= 0.0, but found std nan"),
    ("t.normal(t.zeros(3), t.tensor([1., -1., 1.]))", RuntimeError,
     "normal expects all elements of std >= 0.0"),
    ("t.normal(0., t.tensor([1., -1., 1.]))", RuntimeError, "normal expects all elements of std >= 0.0"),
    ("t.normal(t.zeros(3, dtype=t.int64), 1.)", NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    ("t.normal(t.zeros(3), t.ones(2))", RuntimeError,
     "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ("t.normal(0., 1.)", TypeError, "normal() received an invalid combination of arguments"),
    ("t.zeros(3).normal_(0, -1)", RuntimeError, "normal expects std >= 0.0, but found std -1"),
    ("t.zeros(3, dtype=t.int64).normal_()", NotImplementedError,
     "\"normal_kernel_cpu\" not implemented for 'Long'"),
    ("t.bernoulli(t.tensor([0., 1.5]))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    ("t.bernoulli(t.tensor([0., float('nan')]))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    ("t.bernoulli(t.tensor([0, 1]))", NotImplementedError,
     "\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'"),
    ("t.bernoulli(t.tensor([0., 1.]), 1.5)", RuntimeError,
     "bernoulli_ expects p to be in [0, 1], but got p=1.5"),
    ("t.zeros(3).bernoulli_(-0.5)", RuntimeError, "bernoulli_ expects p to be in [0, 1], but got p=-0.5"),
    ("t.zeros(3).bernoulli_(t.tensor([0., 1., 2.]))", RuntimeError,
     "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    ("t.zeros(3).bernoulli_(t.tensor([1., 0.]))", RuntimeError,
     "The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 0."),
    ("t.multinomial(t.tensor([1., 2.]), 3)", RuntimeError,
     "cannot sample n_sample > prob_dist.size(-1) samples without replacement"),
    ("t.multinomial(t.tensor([1., -2.]), 1)", RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("t.multinomial(t.tensor([1., float('nan')]), 1)", RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("t.multinomial(t.tensor([1., float('inf')]), 2)", RuntimeError,
     "probability tensor contains either `inf`, `nan` or element < 0"),
    ("t.multinomial(t.tensor([[1., 1.], [0., 0.]]), 1)", RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("t.multinomial(t.tensor([1., -2.]), 2, True)", RuntimeError,
     "invalid multinomial distribution (encountering probability entry < 0)"),
    ("t.multinomial(t.tensor([1., float('inf')]), 2, True)", RuntimeError,
     "invalid multinomial distribution (encountering probability entry = infinity or NaN)"),
    ("t.multinomial(t.tensor([0., 0.]), 2, True)", RuntimeError,
     "invalid multinomial distribution (sum of probabilities <= 0)"),
    ("t.multinomial(t.tensor([1, 2]), 1)", RuntimeError,
     "multinomial only supports floating-point dtypes for input, got: Long"),
    ("t.multinomial(t.tensor([1., 2.]), 0)", RuntimeError, "cannot sample n_sample <= 0 samples"),
    ("t.multinomial(t.tensor(1.), 1)", RuntimeError, "prob_dist must be 1 or 2 dim"),
    ("t.multinomial(t.ones(2, 2, 2), 1)", RuntimeError, "prob_dist must be 1 or 2 dim"),
    ("t.multinomial(t.ones(3), 2.0)", TypeError,
     "multinomial(): argument 'num_samples' (position 2) must be int, not float"),
    ("t.multinomial(t.tensor([1., 2.]), 1, out=t.empty(0))", RuntimeError,
     "multinomial expects Long tensor out, got: Float"),
    ("t.poisson(t.tensor([1., -2.]))", RuntimeError,
     "invalid Poisson rate, expected rate to be non-negative"),
    ("t.poisson(t.tensor([1, 2]))", NotImplementedError, "\"poisson_cpu\" not implemented for 'Long'"),
    ("t.randint_like(t.zeros(2), 5, 5)", RuntimeError,
     "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ("t.zeros(3).uniform_(2, 1)", RuntimeError,
     "uniform_ expects to return a [from, to) range, but found from=2 > to=1"),
    ("t.zeros(3).uniform_(0, float('inf'))", RuntimeError, "to is out of bounds for float"),
    ("t.zeros(3).uniform_(float('nan'), 1)", RuntimeError, "from is out of bounds for float"),
    ("t.zeros(3).uniform_(-3.4e38, 3.4e38)", RuntimeError,
     "uniform_ expects to-from <= std::numeric_limits<Float>::max(), but found to=3.4e+38 and "
     "from=-3.4e+38 which result in to-from to exceed the limit"),
    ("t.zeros(3, dtype=t.int64).uniform_()", NotImplementedError,
     "\"check_uniform_bounds\" not implemented for 'Long'"),
    ("t.zeros(3).exponential_(0)", RuntimeError, "exponential_ expects lambda > 0.0, but found lambda=0"),
    ("t.zeros(3, dtype=t.int32).exponential_()", RuntimeError,
     "Exponential distribution is a continuous probability distribution. dtype must be a floating "
     "point but you specified Int"),
    ("t.zeros(3).geometric_(1)", RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1"),
    ("t.zeros(3).geometric_(float('nan'))", RuntimeError,
     "geometric_ expects p to be in (0, 1), but got p=nan"),
    ("t.zeros(3, dtype=t.bool).geometric_(0.5)", NotImplementedError,
     "\"geometric_cpu\" not implemented for 'Bool'"),
    ("t.zeros(3).log_normal_(0, 0)", RuntimeError, "log_normal_ expects std > 0.0, but found std=0"),
    ("t.zeros(3, dtype=t.int64).log_normal_()", NotImplementedError,
     "\"log_normal_cpu\" not implemented for 'Long'"),
    ("t.zeros(3).cauchy_(0, -1)", RuntimeError, "cauchy_ expects sigma > 0.0, but found sigma=-1"),
    ("t.zeros(3, dtype=t.int64).cauchy_()", RuntimeError,
     "Cauchy distribution is a continuous probability distribution. dtype must be a floating point "
     "but you specified long int"),
    ("t.set_rng_state(t.zeros(3))", TypeError, "RNG state must be a torch.ByteTensor"),
    ("t.manual_seed(2**64)", ValueError, "Overflow when unpacking long long"),
]


@pytest.mark.parametrize("code, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_pytorch(code, error, message):
    with pytest.raises(error) as raised:
        eval(code, {"t": torch})
    assert str(raised.value).startswith(message)


@pytest.mark.parametrize("code, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_pytorch_still_raises_these_errors(code, error, message):
    real_torch = pytest.importorskip("torch")
    with pytest.raises(error) as raised:
        eval(code, {"t": real_torch})
    assert str(raised.value).startswith(message)
