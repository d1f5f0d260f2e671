"""Models and optimizers that move between PyTorch and ember through checkpoints.

PyTorch 2.13's files are committed in packages/tensor/tests/serialization_fixtures
(made by make_torch_fixtures.py there, with expected.json holding PyTorch's outputs), so
these tests need only ember; the ones calling PyTorch skip without it."""
import io
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember as torch

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "tensor", "tests", "serialization_fixtures")
EXPECTED = json.load(open(os.path.join(FIXTURES, "expected.json")))


def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(), torch.nn.Linear(8, 3))


def _check_output(model):
    model.eval()
    out = model(torch.tensor(EXPECTED["mlp_input"]))
    np.testing.assert_allclose(out.detach().numpy(), np.array(EXPECTED["mlp_output"], dtype=np.float32),
                               rtol=1e-6, atol=1e-6)


def test_a_pytorch_state_dict_gives_pytorchs_outputs():
    model = _mlp()
    result = model.load_state_dict(torch.load(os.path.join(FIXTURES, "torch_mlp_state_dict.pt")))
    assert repr(result) == "<All keys matched successfully>"
    assert model[1].num_batches_tracked.item() == 1
    _check_output(model)


def test_load_state_dict_assign_and_strict_false_report():
    state = torch.load(os.path.join(FIXTURES, "torch_mlp_state_dict.pt"))
    model = _mlp()
    model.load_state_dict(state, assign=True)
    assert model[0].weight.untyped_storage() is state["0.weight"].untyped_storage()  # no copy
    assert isinstance(model[0].weight, torch.nn.Parameter) and model[0].weight.requires_grad
    _check_output(model)
    partial = dict(state)
    del partial["3.bias"]
    partial["extra.weight"] = torch.ones(1)
    report = _mlp().load_state_dict(partial, strict=False)
    assert report.missing_keys == ["3.bias"] and report.unexpected_keys == ["extra.weight"]
    with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "3.bias"'):
        _mlp().load_state_dict(partial)


def test_a_whole_pytorch_module_loads_with_weights_only_false():
    path = os.path.join(FIXTURES, "torch_mlp_module.pt")
    with pytest.raises(Exception, match="torch.nn.modules.container.Sequential was not an allowed global"):
        torch.load(path)
    model = torch.load(path, weights_only=False)
    assert type(model) is torch.nn.Sequential and type(model[0]) is torch.nn.Linear
    _check_output(model)


def test_pytorch_adam_state_loads_into_embers_adam():
    state = torch.load(os.path.join(FIXTURES, "torch_adam_state.pt"))
    params = [torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.zeros(2, 2))]
    optimizer = torch.optim.Adam(params, lr=0.01)
    optimizer.load_state_dict(state)
    assert optimizer.state_dict()["state"][0]["exp_avg"].tolist() == pytest.approx(EXPECTED["adam_exp_avg_0"])
    assert float(optimizer.state_dict()["state"][0]["step"]) == EXPECTED["adam_step_0"]


def test_embers_modules_and_optimizers_round_trip():
    model = _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(4, 4)).sum().backward()
    optimizer.step()
    buffer = io.BytesIO()
    torch.save({"model": model, "optimizer": optimizer.state_dict()}, buffer)
    loaded = torch.load(io.BytesIO(buffer.getvalue()), weights_only=False)
    x = torch.randn(3, 4)
    model.eval()
    loaded["model"].eval()
    assert torch.equal(model(x), loaded["model"](x))
    state = torch.load(io.BytesIO(buffer.getvalue()), weights_only=False)["optimizer"]
    assert state["param_groups"][0]["momentum"] == 0.9


def _real_torch():
    return pytest.importorskip("torch")


def test_pytorch_loads_embers_model_and_state_dict(tmp_path):
    real = _real_torch()
    model = _mlp()
    model.eval()
    x = torch.randn(5, 4)
    torch.save(model.state_dict(), tmp_path / "sd.pt")
    torch.save(model, tmp_path / "model.pt")
    twin = real.nn.Sequential(real.nn.Linear(4, 8), real.nn.BatchNorm1d(8), real.nn.ReLU(), real.nn.Linear(8, 3))
    twin.load_state_dict(real.load(tmp_path / "sd.pt"))
    twin.eval()
    expected = model(x).detach().numpy()
    np.testing.assert_allclose(twin(real.from_numpy(x.numpy())).detach().numpy(), expected, rtol=1e-6, atol=1e-6)
    whole = real.load(tmp_path / "model.pt", weights_only=False)
    np.testing.assert_allclose(whole(real.from_numpy(x.numpy())).detach().numpy(), expected, rtol=1e-6, atol=1e-6)


def test_safetensors_torch_functions_with_ember_as_torch(tmp_path):
    """The safetensors package's own torch functions run with ember as ``torch``: files,
    bytes, models, the shared-memory refusal; real PyTorch reads the file."""
    pytest.importorskip("safetensors")
    path = tmp_path / "x.safetensors"
    # safetensors.torch imports `torch`: point that name at ember in a fresh interpreter.
    script = textwrap.dedent(f"""
        import sys, ember
        sys.modules["torch"] = ember
        from safetensors.torch import load, load_file, load_model, save, save_file, save_model
        import ember as torch
        w = torch.arange(6.0).reshape(2, 3)
        save_file({{"w": w, "b": torch.ones(2, dtype=torch.bfloat16), "c": torch.tensor([1 + 2j])}}, {str(path)!r})
        loaded = load_file({str(path)!r})
        assert loaded["w"].tolist() == w.tolist() and loaded["b"].dtype == torch.bfloat16
        assert loaded["c"].tolist() == [1 + 2j]
        assert load(save({{"a": torch.zeros(3)}}))["a"].tolist() == [0.0, 0.0, 0.0]
        try:
            save_file({{"a": w, "b": w[0]}}, {str(tmp_path / 'shared.safetensors')!r})
            raise SystemExit("tensors sharing memory were saved")
        except RuntimeError as error:
            assert "share memory" in str(error)
        model, copy = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
        save_model(model, {str(tmp_path / 'm.safetensors')!r})
        load_model(copy, {str(tmp_path / 'm.safetensors')!r})
        assert bool((copy.weight == model.weight).all())
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    theirs = load_file(str(path))
    assert theirs["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and theirs["b"].dtype == torch.bfloat16
    assert theirs["c"].tolist() == [1 + 2j]