"""ember's nn row kernels on CUDA beside PyTorch's: softmax/log_softmax (last dim and an
inner dim), cross_entropy forward + backward, layer/batch/group norm forward + backward
and linear, at transformer- and CNN-sized shapes.

Run on a GPU machine: ``python -m benchmarks.cuda_nn_rows`` (``--quick``: tiny sizes, to
check the script under NUMBA_ENABLE_CUDASIM=1). Every timed call ends with a device
synchronisation. Memory-bound rows report GB/s of the bytes that must move at least once
(PyTorch's kernels read/write them once or a few times too), as a share of the device's
peak bandwidth; linear reports TFLOP/s.

`tools/gpu_run.py` runs it on a GPU machine with the other CUDA tables.
"""

from . import _cuda_table
from ._harness import Workload
from .cuda_ops import _nn_libs

__all__ = ["workloads", "main"]


def _setup(make):
    """Setup for `make(t, F, x, w, b)` -> a zero-argument callable, on float32 CUDA tensors."""
    def wrap(shape, param_shape=None, grad=False):
        def setup(lib):
            t, _, F, _ = _nn_libs(lib)
            t.manual_seed(0)
            x = t.randn(*shape, device="cuda").requires_grad_(grad)
            w = t.rand(*param_shape, device="cuda").requires_grad_(grad) if param_shape else None
            b = t.randn(*param_shape, device="cuda").requires_grad_(grad) if param_shape else None
            return _cuda_table.synced(make(t, F, x, w, b), t)
        return setup
    return wrap


def _backward(out):
    out.sum().backward()


softmax_last = _setup(lambda t, F, x, w, b: lambda: F.softmax(x, dim=-1))
softmax_inner = _setup(lambda t, F, x, w, b: lambda: F.softmax(x, dim=1))
log_softmax_last = _setup(lambda t, F, x, w, b: lambda: F.log_softmax(x, dim=-1))


def _cross_entropy(t, F, x, w, b):
    target = t.randint(0, x.shape[1], (x.shape[0],), device="cuda")
    return lambda: _backward(F.cross_entropy(x, target))


cross_entropy = _setup(_cross_entropy)
layer_norm = _setup(lambda t, F, x, w, b: lambda: _backward(F.layer_norm(x, (x.shape[-1],), w, b)))
batch_norm = _setup(lambda t, F, x, w, b: lambda: _backward(
    F.batch_norm(x, None, None, w, b, training=True)))
group_norm = _setup(lambda t, F, x, w, b: lambda: _backward(F.group_norm(x, 8, w, b)))


def _linear(t, F, x, w, b):
    weight = t.randn(x.shape[1], x.shape[1], device="cuda")
    bias = t.randn(x.shape[1], device="cuda")
    return lambda: F.linear(x, weight, bias)


linear = _setup(_linear)


def workloads(quick=False):
    """The workloads; `quick` shrinks every size (for a smoke run on the simulator)."""
    rows, cols = (4, 8) if quick else (4096, 1024)
    vocab_rows, vocab = (2, 16) if quick else (512, 32768)
    img = (2, 8, 3, 3) if quick else (32, 64, 56, 56)
    spatial = (2, 4, 3) if quick else (64, 32, 1024)
    b4 = 4.0
    n = rows * cols
    g = "cuda"
    return [
        Workload(f"softmax last dim {rows}x{cols}", softmax_last((rows, cols)), g, work=2 * b4 * n, unit="B"),
        Workload(f"log_softmax last dim {vocab_rows}x{vocab}", log_softmax_last((vocab_rows, vocab)), g,
                 work=2 * b4 * vocab_rows * vocab, unit="B"),
        Workload(f"softmax dim=1 of {spatial}", softmax_inner(spatial), g,
                 work=2 * b4 * spatial[0] * spatial[1] * spatial[2], unit="B"),
        Workload(f"cross_entropy fwd+bwd {vocab_rows}x{vocab}", cross_entropy((vocab_rows, vocab), grad=True), g,
                 work=4 * b4 * vocab_rows * vocab, unit="B"),
        Workload(f"layer_norm fwd+bwd {rows}x{cols}", layer_norm((rows, cols), (cols,), grad=True), g,
                 work=5 * b4 * n, unit="B"),
        Workload(f"batch_norm train fwd+bwd {img}", batch_norm(img, (img[1],), grad=True), g,
                 work=5 * b4 * img[0] * img[1] * img[2] * img[3], unit="B"),
        Workload(f"group_norm fwd+bwd {img}", group_norm(img, (img[1],), grad=True), g,
                 work=5 * b4 * img[0] * img[1] * img[2] * img[3], unit="B"),
        Workload(f"linear {rows}x{cols} @ {cols}x{cols} + bias", linear((rows, cols)), g,
                 work=2.0 * rows * cols * cols, unit="FLOP"),
    ]


def main(argv=None):
    """Print the table: medians, ember/torch time ratio and rates."""
    _cuda_table.main("python -m benchmarks.cuda_nn_rows", "ember nn row kernels", workloads, argv)


if __name__ == "__main__":
    main()
