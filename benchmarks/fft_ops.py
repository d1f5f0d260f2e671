"""ember-tensor FFT workloads (issue 27): fft and rfft of 2^20 float32 points and the
stft of one second of 16 kHz audio (n_fft=512, hop 128, Hann window), side by side with
PyTorch. ember's CPU fft/rfft are NumPy's pocketfft (single-threaded), its stft of real
signals one fused op with its own Numba FFT for power-of-two n_fft; PyTorch's are MKL's
or its own pocketfft build.

Run alone: ``python -m benchmarks.fft_ops`` (or ``python -m benchmarks --group fft``).
"""
from ._harness import Workload, fmt_time, run

__all__ = ["WORKLOADS"]


def _lib(name):
    if name == "ember":
        import ember_tensor as lib
    else:
        import torch as lib
    return lib


def _transform(name, n):
    def setup(lib):
        t = _lib(lib)
        t.manual_seed(0)
        x = t.randn(n)
        transform = getattr(t.fft, name)
        return lambda: transform(x)
    return setup


def _stft(rate, n_fft, hop):
    def setup(lib):
        t = _lib(lib)
        t.manual_seed(0)
        audio, window = t.randn(rate), t.hann_window(n_fft)
        return lambda: t.stft(audio, n_fft, hop_length=hop, window=window, return_complex=True)
    return setup


WORKLOADS = [
    Workload("fft 2^20 f32", _transform("fft", 1 << 20), group="fft"),
    Workload("rfft 2^20 f32", _transform("rfft", 1 << 20), group="fft"),
    Workload("stft 1 s 16 kHz (n_fft 512, hop 128, hann)", _stft(16000, 512, 128), group="fft"),
]


def main():
    """Print the fft table: medians and the ember/torch time ratio."""
    import importlib.util
    available = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    print("| workload | ember | torch | ember/torch time |")
    print("|---|---|---|---|")
    for w in WORKLOADS:
        res = run(w, available)
        e, tch = res.get("ember"), res.get("torch")
        ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
        print(f"| {w.name} | {fmt_time(e[0])} | {fmt_time(tch[0]) if tch else '–'} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
