"""ember-data workload: one shuffled epoch over a TensorDataset of 60000 x 1 x 28 x 28 float32
(MNIST-sized) with batch size 64, in the main process and with 2 workers, vs PyTorch.

``python -m benchmarks.data_loader`` prints a table of epoch times and samples/s.
"""
import importlib.util
import statistics
import time

N, BATCH = 60000, 64


def _epoch_fn(lib, num_workers):
    if lib == "ember":
        import ember_tensor as t
        from ember_data import DataLoader, TensorDataset
    else:
        import torch as t
        from torch.utils.data import DataLoader, TensorDataset
    t.manual_seed(0)
    dataset = TensorDataset(t.randn(N, 1, 28, 28), t.randint(0, 10, (N,)))
    # Persistent workers: the epoch is timed, not the start of the processes.
    loader = DataLoader(dataset, batch_size=BATCH, shuffle=True, num_workers=num_workers,
                        persistent_workers=num_workers > 0)

    def epoch():
        count = 0
        for x, y in loader:
            count += x.shape[0]
        assert count == N
    return epoch


def measure(libs, repeats=3):
    """{(lib, num_workers): median epoch seconds}, epochs alternating between libraries."""
    results = {}
    for num_workers in (0, 2):
        fns = {lib: _epoch_fn(lib, num_workers) for lib in libs}
        for fn in fns.values():
            fn()  # warm-up epoch: compiles, starts workers
        samples = {lib: [] for lib in libs}
        for _ in range(repeats):
            for lib, fn in fns.items():
                start = time.perf_counter()
                fn()
                samples[lib].append(time.perf_counter() - start)
        for lib in libs:
            results[(lib, num_workers)] = statistics.median(samples[lib])
        del fns
    return results


def main():
    libs = ["ember"] + (["torch"] if importlib.util.find_spec("torch") else [])
    results = measure(libs)
    print("| workload | ember | torch | ember/torch | ember samples/s | torch samples/s |")
    print("|---|---|---|---|---|---|")
    for num_workers in (0, 2):
        e, tch = results[("ember", num_workers)], results.get(("torch", num_workers))
        ratio = f"{e / tch:.2f}" if tch else "–"
        print(f"| epoch, 60000x1x28x28 f32, batch 64, shuffled, num_workers={num_workers} | {e:.2f} s | "
              f"{f'{tch:.2f} s' if tch else '–'} | {ratio} | {N / e:,.0f} | {f'{N / tch:,.0f}' if tch else '–'} |")


if __name__ == "__main__":
    main()
