"""ember.compile against eager ember and eager PyTorch (issue 23's targets).

- a chain of 20 elementwise ops on 8 float32 elements: compiled ember vs eager ember
  (target <= 0.3x: the per-op Python overhead goes, one kernel runs);
- ``relu(x * y + z)`` on 1e7 float32: compiled ember (one fused kernel: reads three
  arrays, writes one) vs eager ember and eager PyTorch (three kernels, two temporaries);
- the MLP 784-512-512-10 SGD training step, batch 64, with ``compile(model)``: compiled
  ember vs eager PyTorch (target <= 0.7x);
- reduction prologues: ``((x - y) ** 2).mean()`` on 1e7 float32 and ``x.exp().sum(-1)``
  on 1000x1000 float32: compiled ember (one fused reduction loop, the elementwise result
  never stored) vs eager ember and eager PyTorch (an elementwise kernel writing a
  temporary, then a reduction reading it);
- softmax prologues: ``softmax(x * 0.125 + m, -1)`` on (64, 4, 64, 64) float32 with a
  (64, 64) mask and on 1000x1000 float32 with a row mask: compiled ember (eager's softmax
  row kernel reading the tree's values, never stored) vs eager ember and eager PyTorch
  (two elementwise kernels and a temporary, then softmax);
- layer norm prologues: ``F.layer_norm(x + r, (d,), w, b)`` (a Transformer block's
  residual add) on (16*64, 128) and (4096, 1024) float32: compiled ember (eager's layer
  norm row kernel reading the sum, never stored) vs eager ember and eager PyTorch (an add
  writing a temporary, then layer norm);
- the MLP's forward under no_grad (inference) and ``relu(x @ w + b)`` at three sizes:
  compiled ember (the bias add + relu runs in place on the product's buffer, memory
  planning) vs compiled with ``config.memory_planning`` off vs eager ember vs eager PyTorch;
- data-dependent Python control flow (fx cannot capture it; replayed from guarded traces):
  a small MLP 32-64-64-1 training step whose forward takes ``if loss > threshold`` (both
  branches alternate), a ``while x.norm() > 1: x = x / 2`` loop (varying trip counts),
  and the 20-op chain with a break between its halves (``if x.sum() > 0`` picks the second
  half's constant): compiled ember (each half one fused kernel) vs eager ember;
- an LSTM (input and hidden 256, seq 35, batch 20, a linear head, cross entropy) SGD
  training step with ``compile(model)``: compiled ember vs eager PyTorch (target <= 1.0x);
- a TransformerEncoderLayer (d_model 128, 4 heads, feed-forward 256, seq 64, batch 16)
  AdamW training step with the layer compiled: compiled ember vs eager PyTorch (target
  <= 0.9x);
- PyTorch's own ``torch.compile`` (inductor) on the MLP, LSTM and Transformer steps, the
  chain and ``relu(x * y + z)`` (rows named ``torch.compile``, PyTorch's column only);
- ``relu(x * y + z)``'s compiled time as a multiple of the time to stream its 160 MB once
  at this machine's STREAM triad bandwidth (``machine.stream_triad``; target <= 1.2);
- compile time of the chain, and of the MLP training step, from an empty kernel cache
  (``EMBER_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` empty) and from the disk cache (fresh
  processes; `cold`; MLP targets <= 5 s and <= 0.5 s).

Rows of the suite (`python -m benchmarks --group compile`) put compiled ember in the ember
column; ``python -m benchmarks.compile_steps`` prints the ratios and compile times
(``python -m benchmarks.compile_steps WORD ...``: only the workloads whose names hold one
of the words, and no compile times unless a word is ``cold``). The rows' setups are
`compile_kernels` (fused kernels) and `compile_training` (training steps, guarded traces);
this module lists the rows and reports them.
"""
import os
import subprocess
import sys
import tempfile

from ._compile_variants import VARIANTS
from ._harness import Workload, fmt_time, run
from .compile_kernels import (EPILOGUE_SIZES, LAYER_NORM_SIZES, N_BIG, SOFTMAX_SIZES, _chain_setup, _exp_rows,
                              _fma_setup, _inference_mlp_setup, _layer_norm_name, _mse, _numel, _reduction_setup,
                              _relu_linear_setup, _residual_layer_norm_setup, _softmax_name, _softmax_setup)
from .compile_training import (_branchy_setup, _chain_with_a_break_setup, _halve_setup, _lstm_setup, _mlp_setup,
                               _transformer_setup)
from .nn_training import BATCH


WORKLOADS = [
    Workload("compile: 20-op chain, 8 f32, compiled", _chain_setup(True), group="compile"),
    Workload("compile: 20-op chain, 8 f32, eager", _chain_setup(False), group="compile"),
    Workload("compile: relu(x*y+z) 1e7 f32, compiled", _fma_setup(True), group="compile", work=16 * N_BIG,
             unit="B", repeats=5),
    Workload("compile: relu(x*y+z) 1e7 f32, eager", _fma_setup(False), group="compile", work=16 * N_BIG,
             unit="B", repeats=5),
    Workload("compile: ((x-y)**2).mean() 1e7 f32, compiled", _reduction_setup(True, _mse, [(N_BIG,)] * 2),
             group="compile", work=8 * N_BIG, unit="B", repeats=5),
    Workload("compile: ((x-y)**2).mean() 1e7 f32, eager", _reduction_setup(False, _mse, [(N_BIG,)] * 2),
             group="compile", work=8 * N_BIG, unit="B", repeats=5),
    Workload("compile: x.exp().sum(-1) 1000x1000 f32, compiled", _reduction_setup(True, _exp_rows, [(1000, 1000)]),
             group="compile", work=4 * 10 ** 6, unit="B"),
    Workload("compile: x.exp().sum(-1) 1000x1000 f32, eager", _reduction_setup(False, _exp_rows, [(1000, 1000)]),
             group="compile", work=4 * 10 ** 6, unit="B"),
    *[Workload(f"compile: {_softmax_name(xs, ms)}, {v}", _softmax_setup(v == "compiled", xs, ms), group="compile",
               work=4 * _numel(xs), unit="B")
      for xs, ms in SOFTMAX_SIZES for v in ("compiled", "eager")],
    *[Workload(f"compile: {_layer_norm_name(shape)}, {v}", _residual_layer_norm_setup(v == "compiled", shape),
               group="compile", work=4 * _numel(shape), unit="B")
      for shape in LAYER_NORM_SIZES for v in ("compiled", "eager")],
    Workload(f"compile: MLP 784-512-512-10 SGD step, batch {BATCH}, compiled", _mlp_setup(True), group="compile",
             work=3 * 2 * BATCH * (784 * 512 + 512 * 512 + 512 * 10), unit="FLOP"),
    Workload(f"compile: MLP 784-512-512-10 SGD step, batch {BATCH}, eager", _mlp_setup(False), group="compile",
             work=3 * 2 * BATCH * (784 * 512 + 512 * 512 + 512 * 10), unit="FLOP"),
    Workload(f"compile: MLP 784-512-512-10 SGD step, batch {BATCH}, whole step", _mlp_setup("whole step"),
             group="compile", work=3 * 2 * BATCH * (784 * 512 + 512 * 512 + 512 * 10), unit="FLOP"),
    *[Workload(f"compile: MLP 784-512-512-10 inference (no_grad), batch {BATCH}, {v}", _inference_mlp_setup(v),
               group="compile", work=2 * BATCH * (784 * 512 + 512 * 512 + 512 * 10), unit="FLOP")
      for v in VARIANTS],
    *[Workload(f"compile: relu(x @ w + b) {m}x{k}x{n} f32, {v}", _relu_linear_setup(m, k, n, v),
               group="compile", work=2 * m * k * n, unit="FLOP")
      for m, k, n in EPILOGUE_SIZES for v in VARIANTS],
    Workload("compile: LSTM 256 seq 35 batch 20 SGD step, compiled", _lstm_setup(True), group="compile",
             repeats=5),
    Workload("compile: LSTM 256 seq 35 batch 20 SGD step, eager", _lstm_setup(False), group="compile", repeats=5),
    Workload("compile: TransformerEncoderLayer d128 h4 seq 64 batch 16 AdamW step, compiled",
             _transformer_setup(True), group="compile", repeats=5),
    Workload("compile: TransformerEncoderLayer d128 h4 seq 64 batch 16 AdamW step, eager",
             _transformer_setup(False), group="compile", repeats=5),
    *[Workload(f"compile: {name}, torch.compile", setup("torch.compile"), group="compile", libs=("torch",),
               repeats=5)
      for name, setup in [("20-op chain, 8 f32", _chain_setup), ("relu(x*y+z) 1e7 f32", _fma_setup),
                          (f"MLP 784-512-512-10 SGD step, batch {BATCH}", _mlp_setup),
                          ("LSTM 256 seq 35 batch 20 SGD step", _lstm_setup),
                          ("TransformerEncoderLayer d128 h4 seq 64 batch 16 AdamW step", _transformer_setup)]],
    Workload("compile: branchy MLP 32-64-64-1 SGD step (if loss > 1), compiled", _branchy_setup(True),
             group="compile"),
    Workload("compile: branchy MLP 32-64-64-1 SGD step (if loss > 1), eager", _branchy_setup(False),
             group="compile"),
    Workload("compile: while x.norm() > 1: x = x / 2, 16 f32, compiled", _halve_setup(True), group="compile"),
    Workload("compile: while x.norm() > 1: x = x / 2, 16 f32, eager", _halve_setup(False), group="compile"),
    Workload("compile: 20-op chain with a graph break, 8 f32, compiled", _chain_with_a_break_setup(True),
             group="compile"),
    Workload("compile: 20-op chain with a graph break, 8 f32, eager", _chain_with_a_break_setup(False),
             group="compile"),
]

_COLD = """
import time
t0 = time.perf_counter()
import ember_tensor as t
import ember_compile
f = ember_compile.compile(lambda x, y: t.relu(x * y + 0.5) - 0.25)
x, y = t.randn(8), t.randn(8)
t1 = time.perf_counter()
f(x, y)
print(time.perf_counter() - t1)
"""


_COLD_MLP = """
import time
import ember_autograd, ember_compile, ember_nn as nn, ember_nn.functional as F, ember_optim, ember_tensor as t
t.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                      nn.Linear(512, 10))
run_model = ember_compile.compile(model)
optimizer = ember_optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
data, target = t.randn(64, 1, 28, 28), t.randint(0, 10, (64,))
def step():
    optimizer.zero_grad()
    F.cross_entropy(run_model(data), target).backward()
    optimizer.step()
times = []
for _ in range(3):
    t0 = time.perf_counter()
    step()
    times.append(time.perf_counter() - t0)
print(times[0], min(times[1:]))
"""


def compile_times(program=_COLD, runs=2):
    """The first compiled call's seconds in fresh processes: the first from an empty kernel
    cache (``EMBER_CACHE_DIR`` and ``NUMBA_CACHE_DIR`` both a new empty directory), the
    others from the disk cache the first one filled. Each process prints its numbers."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, EMBER_CACHE_DIR=cache, NUMBA_CACHE_DIR=os.path.join(cache, "numba"))
        return [[float(v) for v in subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                                                  text=True, check=True).stdout.split()] for _ in range(runs)]


def mlp_compile_times():
    """(first step from an empty cache, first step from the disk cache (min of two
    processes), a later step): seconds of the compiled MLP SGD step; a first step holds the
    capture, fusion, the ahead-of-time lowering and every kernel's compile or cache load."""
    runs = compile_times(_COLD_MLP, runs=3)
    return runs[0][0], min(r[0] for r in runs[1:]), min(r[1] for r in runs)


def main(words=()):
    import importlib.util
    available = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    chosen = [w for w in WORKLOADS if not words or any(word in w.name for word in words)]
    results = {w.name: run(w, available) for w in chosen}
    for w in chosen:
        r = results[w.name]
        if "ember" not in r:  # a torch.compile row
            print(f"{w.name}: torch {fmt_time(r['torch'][0])}" if "torch" in r else f"{w.name}: no torch")
            continue
        print(f"{w.name}: ember {fmt_time(r['ember'][0])}" +
              (f", torch {fmt_time(r['torch'][0])}, ember/torch {r['ember'][0] / r['torch'][0]:.2f}"
               if "torch" in r else ""))
    for kind in ("20-op chain, 8 f32", "relu(x*y+z) 1e7 f32", "((x-y)**2).mean() 1e7 f32",
                 "x.exp().sum(-1) 1000x1000 f32", *(_softmax_name(xs, ms) for xs, ms in SOFTMAX_SIZES),
                 *(_layer_norm_name(shape) for shape in LAYER_NORM_SIZES),
                 f"MLP 784-512-512-10 SGD step, batch {BATCH}",
                 "branchy MLP 32-64-64-1 SGD step (if loss > 1)", "while x.norm() > 1: x = x / 2, 16 f32",
                 "20-op chain with a graph break, 8 f32"):
        c, e = results.get(f"compile: {kind}, compiled"), results.get(f"compile: {kind}, eager")
        if c and e:
            print(f"{kind}: compiled/eager ember = {c['ember'][0] / e['ember'][0]:.2f}")
        w = results.get(f"compile: {kind}, whole step")
        if w and e:
            print(f"{kind}: whole step/eager ember = {w['ember'][0] / e['ember'][0]:.2f}" +
                  (f", whole step/eager torch = {w['ember'][0] / w['torch'][0]:.2f}" if "torch" in w else ""))
    for kind in [f"MLP 784-512-512-10 inference (no_grad), batch {BATCH}"] + \
            [f"relu(x @ w + b) {m}x{k}x{n} f32" for m, k, n in EPILOGUE_SIZES]:
        found = [results.get(f"compile: {kind}, {v}") for v in VARIANTS]
        if all(found):
            c, u, e = (r["ember"][0] for r in found)
            print(f"{kind}: compiled/eager ember = {c / e:.2f}, compiled/without memory planning = {c / u:.2f}")
    ratios = [(f"MLP 784-512-512-10 SGD step, batch {BATCH}", "torch"),
              ("LSTM 256 seq 35 batch 20 SGD step", "torch"),
              ("TransformerEncoderLayer d128 h4 seq 64 batch 16 AdamW step", "torch")]
    for kind, _ in ratios + [("20-op chain, 8 f32", None), ("relu(x*y+z) 1e7 f32", None)]:
        c, tc = results.get(f"compile: {kind}, compiled"), results.get(f"compile: {kind}, torch.compile")
        if c and tc:
            print(f"{kind}: compiled ember/torch.compile = {c['ember'][0] / tc['torch'][0]:.2f} "
                  f"(torch.compile {fmt_time(tc['torch'][0])}, min {fmt_time(tc['torch'][1])})")
    for kind, _ in ratios:
        c = results.get(f"compile: {kind}, compiled")
        if c and "torch" in c:
            print(f"{kind}: compiled ember/eager torch = {c['ember'][0] / c['torch'][0]:.2f} "
                  f"(min/min {c['ember'][1] / c['torch'][1]:.2f})")
    fma = results.get("compile: relu(x*y+z) 1e7 f32, compiled")
    if fma:
        from .machine import stream_triad
        triad = stream_triad()
        stream = 16 * N_BIG / triad
        print(f"relu(x*y+z) 1e7 f32: compiled ember {fmt_time(fma['ember'][1])} (min) = "
              f"{fma['ember'][1] / stream:.2f} x the triad time ({fmt_time(stream)} at {triad / 1e9:.1f} GB/s)")
    if words and "cold" not in words:
        return
    (cold,), (warm,) = compile_times()
    print(f"first compiled call (capture + fusion + kernel): empty cache {cold:.2f} s, disk cache {warm:.3f} s")
    cold, warm, step = mlp_compile_times()
    print(f"MLP SGD step, first compiled step in a fresh process: empty cache {cold:.2f} s, disk cache "
          f"{warm:.2f} s (a later step {step * 1e3:.2f} ms)")


if __name__ == "__main__":
    main(sys.argv[1:])
