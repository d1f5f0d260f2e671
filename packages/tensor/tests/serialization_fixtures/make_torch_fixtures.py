"""Write the checkpoints of real PyTorch that ember's tests load without PyTorch installed.

Run from this folder with PyTorch installed (a test-only tool, never a dependency):

    python make_torch_fixtures.py

The files are small and committed. ``expected.json`` records what each must load as,
computed here by PyTorch itself, so the tests need only ember and NumPy.
"""
import collections
import json
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def mlp():
    """The architecture the tests rebuild in ember: Linear, BatchNorm1d, ReLU, Linear."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(),
                                torch.nn.Linear(8, 3))
    model.train()
    model(torch.randn(16, 4))  # moves the BatchNorm running statistics off their defaults
    model.eval()
    return model


def every_dtype():
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    return collections.OrderedDict([
        ("float32", base), ("row", base[1]), ("column", base[:, 2]), ("transposed", base.t()),
        ("float64", torch.tensor([1.5, -2.25], dtype=torch.float64)),
        ("float16", torch.tensor([0.5, 65504.0], dtype=torch.float16)),
        ("bfloat16", torch.tensor([1.0, -3.0e38], dtype=torch.bfloat16)),
        ("int8", torch.tensor([-128, 127], dtype=torch.int8)),
        ("int16", torch.tensor([-32768, 7], dtype=torch.int16)),
        ("int32", torch.tensor([2 ** 31 - 1], dtype=torch.int32)),
        ("int64", torch.tensor([-(2 ** 62), 5])),
        ("uint8", torch.tensor([0, 255], dtype=torch.uint8)),
        ("bool", torch.tensor([True, False, True])),
        ("scalar", torch.tensor(2.5)),
        ("empty", torch.zeros(0, 3)),
        ("grad", torch.ones(2, requires_grad=True)),
        ("meta", {"epoch": 3, "lr": 0.1, "name": "mlp", "dims": torch.Size([3, 4]), "dtype": torch.float16}),
    ])


def main():
    model = mlp()
    x = torch.linspace(-2, 2, 20).reshape(5, 4)
    torch.save(model.state_dict(), os.path.join(HERE, "torch_mlp_state_dict.pt"))
    torch.save(model, os.path.join(HERE, "torch_mlp_module.pt"))
    torch.save(every_dtype(), os.path.join(HERE, "torch_every_dtype.pt"))
    torch.save(every_dtype(), os.path.join(HERE, "torch_every_dtype_legacy.pt"), _use_new_zipfile_serialization=False)

    params = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.zeros(2, 2))]
    optimizer = torch.optim.Adam(params, lr=0.01)
    for _ in range(2):
        optimizer.zero_grad()
        (params[0].sum() * 2 + (params[1] ** 2).sum()).backward()
        optimizer.step()
    torch.save(optimizer.state_dict(), os.path.join(HERE, "torch_adam_state.pt"))
    torch.save({"array": np.arange(6.0).reshape(2, 3)}, os.path.join(HERE, "torch_numpy.pt"))

    expected = {
        "torch_version": torch.__version__,
        "mlp_input": x.tolist(),
        "mlp_output": model(x).tolist(),
        "adam_exp_avg_0": optimizer.state_dict()["state"][0]["exp_avg"].tolist(),
        "adam_step_0": float(optimizer.state_dict()["state"][0]["step"]),
    }
    with open(os.path.join(HERE, "expected.json"), "w") as fh:
        json.dump(expected, fh, indent=1)


if __name__ == "__main__":
    main()
