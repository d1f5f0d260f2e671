"""ember's FFTs on CUDA beside PyTorch's (both cuFFT): complex fft and real rfft of 2^20
points, a batch of 2-d transforms, their inverses, and the stft of one second of 16 kHz
audio (n_fft 512, hop 128, Hann window) and of a batch of 32 such clips. ember's time
beyond cuFFT's own is its layout copies, the normalization pass and its host overhead.

Run on a GPU machine: ``python -m benchmarks.cuda_fft`` (``--quick``: tiny sizes, to
check the script under NUMBA_ENABLE_CUDASIM=1, where the host computes the transforms).
Every timed call ends with a device synchronisation. Rates are the bytes a transform
must read and write at least once, as a share of the device's peak bandwidth.

`tools/gpu_run.py` runs it on a GPU machine with the other CUDA tables.
"""

from . import _cuda_table
from ._harness import Workload

__all__ = ["workloads", "main"]


def _setup(make, shape, complex_input=False):
    """Setup for `make(t, x)` -> a zero-argument callable, on a float32 (complex64 with
    `complex_input`) CUDA tensor of `shape`."""
    def setup(name):
        t = _cuda_table.tensor_lib(name)
        t.manual_seed(0)
        x = t.randn(*shape, device="cuda")
        if complex_input:
            x = t.complex(x, t.randn(*shape, device="cuda"))
        return _cuda_table.synced(make(t, x), t)
    return setup


def _stft(t, x):
    window = t.hann_window(512, device="cuda")
    return lambda: t.stft(x, 512, hop_length=128, window=window, return_complex=True)


def workloads(quick=False):
    """The workloads; `quick` shrinks every size (for a smoke run on the simulator)."""
    n = 1 << (8 if quick else 20)
    rows, side = (2, 8) if quick else (64, 256)
    rate, clips = (1024, 2) if quick else (16000, 32)
    g, c8, f4 = "cuda", 8.0, 4.0
    return [
        Workload(f"fft {n} c64", _setup(lambda t, x: lambda: t.fft.fft(x), (n,), True), g, work=2 * c8 * n, unit="B"),
        Workload(f"ifft {n} c64 (1/n)", _setup(lambda t, x: lambda: t.fft.ifft(x), (n,), True), g, work=2 * c8 * n,
                 unit="B"),
        Workload(f"rfft {n} f32", _setup(lambda t, x: lambda: t.fft.rfft(x), (n,)), g, work=(f4 + c8 / 2) * n,
                 unit="B"),
        Workload(f"irfft {n} f32", _setup(lambda t, x: (lambda s: lambda: t.fft.irfft(s, n=n))(t.fft.rfft(x)), (n,)),
                 g, work=(f4 + c8 / 2) * n, unit="B"),
        Workload(f"fft2 {rows}x{side}x{side} c64", _setup(lambda t, x: lambda: t.fft.fft2(x), (rows, side, side), True),
                 g, work=2 * c8 * rows * side * side, unit="B"),
        Workload(f"fft dim 0 of {side}x{rows * 16} c64",
                 _setup(lambda t, x: lambda: t.fft.fft(x, dim=0), (side, rows * 16), True), g,
                 work=2 * c8 * side * rows * 16, unit="B"),
        Workload(f"stft {rate} samples", _setup(_stft, (rate,)), g, work=f4 * rate * 5, unit="B"),
        Workload(f"stft {clips}x{rate} samples", _setup(_stft, (clips, rate)), g, work=f4 * clips * rate * 5,
                 unit="B"),
    ]


def main(argv=None):
    """Print the table: medians, ember/torch time ratio and rates."""
    _cuda_table.main("python -m benchmarks.cuda_fft", "ember FFTs", workloads, argv)


if __name__ == "__main__":
    main()
