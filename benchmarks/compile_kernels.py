"""The compiler's fused-kernel rows (`compile_steps` indexes and reports them): a chain of
20 tiny elementwise ops, ``relu(x * y + z)`` on 1e7 float32, reduction prologues and
epilogues, softmax and layer norm prologues, the MLP's forward under no_grad and
``relu(x @ w + b)`` (matmul epilogues, with and without memory planning)."""
from ._compile_variants import _compiled, _no_grad, _run_as, _variant
from .nn_training import BATCH, _libs, _mlp


N_BIG = 10_000_000


def _chain(t, x, y):
    for _ in range(5):  # 4 ops a round: 20 elementwise ops
        x = t.relu(x * y + 0.5) - 0.25
    return x


def _chain_setup(compiled):
    def setup(lib):
        t = _libs(lib)[0]
        x, y = t.randn(8), t.randn(8)
        fn = _run_as(lambda x, y: _chain(t, x, y), compiled, lib)
        fn(x, y)  # compile outside the timing
        return lambda: fn(x, y)
    return setup


def _fma_relu(t, x, y, z):
    return t.relu(x * y + z)


def _fma_setup(compiled):
    def setup(lib):
        t = _libs(lib)[0]
        x, y, z = t.rand(N_BIG), t.rand(N_BIG), t.rand(N_BIG)
        fn = _run_as(lambda x, y, z: _fma_relu(t, x, y, z), compiled, lib)
        fn(x, y, z)
        return lambda: fn(x, y, z)
    return setup


def _mse(x, y):
    return ((x - y) ** 2).mean()


def _exp_rows(x):
    return x.exp().sum(-1)


def _reduction_setup(compiled, fn, shapes):
    def setup(lib):
        t = _libs(lib)[0]
        args = [t.randn(*shape) for shape in shapes]
        call = _compiled(fn) if compiled and lib == "ember" else fn
        call(*args)
        return lambda: call(*args)
    return setup


def _masked_softmax(t, x, m):
    return t.softmax(x * 0.125 + m, -1)


def _softmax_setup(compiled, x_shape, m_shape):
    def setup(lib):
        t = _libs(lib)[0]
        x, m = t.randn(*x_shape), t.randn(*m_shape)
        call = _run_as(lambda x, m: _masked_softmax(t, x, m), compiled, lib)
        call(x, m)
        return lambda: call(x, m)
    return setup


SOFTMAX_SIZES = [((64, 4, 64, 64), (64, 64)), ((1000, 1000), (1000,))]


def _softmax_name(x_shape, m_shape):
    return f"softmax(x*s+m, -1) {'x'.join(map(str, x_shape))} mask {'x'.join(map(str, m_shape))} f32"


def _residual_layer_norm_setup(compiled, shape):
    def setup(lib):
        t, _, F, _ = _libs(lib)
        x, r = t.randn(*shape), t.randn(*shape)
        w, b = t.randn(shape[-1]), t.randn(shape[-1])
        call = _run_as(lambda x, r, w, b: F.layer_norm(x + r, (shape[-1],), w, b), compiled, lib)
        call(x, r, w, b)
        return lambda: call(x, r, w, b)
    return setup


LAYER_NORM_SIZES = [(16 * 64, 128), (4096, 1024)]


def _layer_norm_name(shape):
    return f"layer_norm(x+r) {'x'.join(map(str, shape))} f32"


def _numel(shape):
    count = 1
    for n in shape:
        count *= n
    return count


def _inference_mlp_setup(variant):
    """The MLP's forward under no_grad (its parameters require grad, as a trained model's)."""
    def setup(lib):
        t, nn = _libs(lib)[:2]
        no_grad = _no_grad(lib)
        t.manual_seed(0)
        model = _mlp(nn)
        fn, first = _variant(model, variant) if lib == "ember" else (model, model)
        data = t.randn(BATCH, 1, 28, 28)
        with no_grad():
            first(data)

        def forward():
            with no_grad():
                return fn(data)
        return forward
    return setup


def _relu_linear(t, x, w, b):
    return t.relu(x @ w + b)


def _relu_linear_setup(m, k, n, variant):
    def setup(lib):
        t = _libs(lib)[0]
        t.manual_seed(0)
        x, w, b = t.randn(m, k), t.randn(k, n), t.randn(n)
        fn, first = _variant(lambda x, w, b: _relu_linear(t, x, w, b), variant) if lib == "ember" else \
            ((lambda x, w, b: _relu_linear(t, x, w, b)),) * 2
        first(x, w, b)
        return lambda: fn(x, w, b)
    return setup


EPILOGUE_SIZES = [(64, 512, 512), (256, 1024, 1024), (1024, 32, 1024)]  # the last: a thin GEMM, a big epilogue
