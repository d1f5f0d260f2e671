"""Modules on CUDA devices, run in a fresh interpreter on Numba's CUDA simulator (or on a
real GPU when NUMBA_ENABLE_CUDASIM=0 is set and one is there): .cuda()/.cpu() keep the
Parameter objects, forward and backward run on the device, state dicts load across
devices, DataParallel with one device moves the module there."""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import numpy as np
    import ember_tensor as torch
    import ember_nn as nn

    assert torch.cuda.is_available()
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    cpu_state = {k: v.clone() for k, v in model.state_dict().items()}
    weight = model[0].weight
    assert model.cuda() is model and model[0].weight is weight
    assert weight.device.type == "cuda" and isinstance(weight, nn.Parameter) and weight.requires_grad

    x = torch.ones(5, 3).cuda()
    out = model(x)
    assert out.device.type == "cuda" and tuple(out.shape) == (5, 2)
    out.sum().backward()
    assert weight.grad.device.type == "cuda"

    model.cpu()
    assert model[0].weight is weight and weight.device.type == "cpu" and weight.grad.device.type == "cpu"
    expected = model(torch.ones(5, 3))
    np.testing.assert_allclose(np.array(out.detach().cpu()), np.array(expected.detach()), rtol=1e-5)

    gpu_model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to("cuda")
    gpu_model.load_state_dict(cpu_state)  # values cross devices, parameters stay on the GPU
    assert gpu_model[2].bias.device.type == "cuda"
    assert gpu_model[2].bias.cpu().tolist() == cpu_state["2.bias"].tolist()

    wrapped = nn.DataParallel(nn.Linear(3, 2))
    assert wrapped.device_ids == [0] and wrapped.module.weight.device.type == "cuda"
    assert wrapped(torch.ones(2, 3).cuda()).device.type == "cuda"
    print("ok")
""")


def test_modules_on_cuda():
    env = dict(os.environ)
    env.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")
