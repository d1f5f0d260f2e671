"""ember-distributions workloads on 1e6 float32 elements: Normal.log_prob, Normal.rsample
(and the standard-normal draw inside it, ``randn``), Categorical.sample, a Gamma draw and
Gamma.cdf, each side by side with torch.distributions.

``python -m benchmarks.distributions_ops`` prints a table (ember/torch < 1: ember is faster).
"""
import importlib.util

from ._harness import Workload, fmt_time, run

N = 1_000_000


def _libs(lib):
    if lib == "ember":
        import ember_distributions as dist
        import ember_tensor as t
    else:
        import torch as t
        import torch.distributions as dist
    t.manual_seed(0)
    return t, dist


def _normal_log_prob(lib):
    t, dist = _libs(lib)
    d = dist.Normal(t.randn(N), t.rand(N) + 0.5, validate_args=False)
    x = t.randn(N)
    return lambda: d.log_prob(x)


def _normal_rsample(lib):
    t, dist = _libs(lib)
    d = dist.Normal(t.randn(N), t.rand(N) + 0.5, validate_args=False)
    return lambda: d.rsample()


def _randn(lib):
    # What Normal.rsample spends its time in: the rest is one multiply-add.
    t, _ = _libs(lib)
    return lambda: t.randn(N)


def _categorical_sample_batch(lib):
    t, dist = _libs(lib)
    d = dist.Categorical(logits=t.randn(N // 10, 10), validate_args=False)
    return lambda: d.sample()


def _categorical_sample_draws(lib):
    t, dist = _libs(lib)
    d = dist.Categorical(logits=t.randn(10), validate_args=False)
    return lambda: d.sample((N,))


def _gamma_sample(lib):
    t, dist = _libs(lib)
    d = dist.Gamma(t.rand(N) * 4 + 0.1, t.ones(N), validate_args=False)
    return lambda: d.sample()


def _gamma_cdf(lib):
    t, dist = _libs(lib)
    d = dist.Gamma(t.rand(N) * 4 + 0.1, t.ones(N), validate_args=False)
    x = t.rand(N) * 8
    return lambda: d.cdf(x)


WORKLOADS = [
    Workload("Normal.log_prob 1e6 f32", _normal_log_prob, group="distributions", work=16 * N, unit="B", repeats=7),
    Workload("Normal.rsample 1e6 f32", _normal_rsample, group="distributions", work=12 * N, unit="B", repeats=7),
    Workload("randn 1e6 f32 (inside Normal.rsample)", _randn, group="distributions", work=4 * N, unit="B", repeats=7),
    Workload("Categorical.sample, 1e5 x 10 logits (1e6 elements)", _categorical_sample_batch, group="distributions",
             repeats=7),
    Workload("Categorical(10).sample((1e6,))", _categorical_sample_draws, group="distributions", repeats=7),
    Workload("Gamma.sample 1e6 f32, concentration in [0.1, 4.1)", _gamma_sample, group="distributions", repeats=5),
    Workload("Gamma.cdf 1e6 f32, concentration in [0.1, 4.1)", _gamma_cdf, group="distributions", repeats=5),
]


def main():
    available = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    print("| workload | ember | torch | ember/torch |")
    print("|---|---|---|---|")
    for w in WORKLOADS:
        res = run(w, available)
        e, tch = res.get("ember"), res.get("torch")
        ratio = f"{e[0] / tch[0]:.2f}" if e and tch else "–"
        cells = [f"{fmt_time(r[0])} ({fmt_time(r[1])}–{fmt_time(r[2])})" if r else "–" for r in (e, tch)]
        print(f"| {w.name} | {cells[0]} | {cells[1]} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
