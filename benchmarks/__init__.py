"""ember's benchmark suite: each workload timed for ember and, when installed, PyTorch,
interleaved in one run. Run with ``python -m benchmarks`` (``--help`` for options)."""
