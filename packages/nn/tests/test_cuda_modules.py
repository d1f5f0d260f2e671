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


# Masks, paddings and index tensors a functional makes itself are made on its inputs'
# device: on CUDA each of these calls failed with a cpu/cuda mismatch.
MADE_ON_THE_INPUTS_DEVICE = textwrap.dedent("""
    import numpy as np
    import ember_tensor as torch
    import ember_nn as nn
    import ember_nn.functional as F
    from ember_nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

    torch.manual_seed(0)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 5, 4), torch.randn(2, 5, 4)
    causal = F.scaled_dot_product_attention(q.cuda(), k[:, :3].cuda(), v[:, :3].cuda(), is_causal=True)
    expected = F.scaled_dot_product_attention(q, k[:, :3], v[:, :3], is_causal=True)
    np.testing.assert_allclose(causal.cpu().numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)

    mha = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True)
    x = torch.randn(3, 2, 4)
    mask = torch.ones(3, 3, dtype=torch.bool).triu(1)
    padding = torch.tensor([[False, False, True], [False, False, False]])
    expected, _ = mha(x, x, x, attn_mask=mask, key_padding_mask=padding)
    mha.cuda()
    got, _ = mha(x.cuda(), x.cuda(), x.cuda(), attn_mask=mask.cuda(), key_padding_mask=padding.cuda())
    np.testing.assert_allclose(got.detach().cpu().numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-5)

    bag = F.embedding_bag(torch.tensor([[0, 2], [1, 1]]).cuda(), torch.randn(3, 4).cuda(), mode="max")
    assert bag.device.type == "cuda" and tuple(bag.shape) == (2, 4)

    sequences = [torch.randn(4, 3), torch.randn(2, 3)]
    padded = pad_sequence([s.cuda() for s in sequences])
    assert padded.device.type == "cuda" and tuple(padded.shape) == (4, 2, 3)
    packed = pack_padded_sequence(padded, torch.tensor([4, 2]), enforce_sorted=False)
    assert packed.batch_sizes.device.type == "cpu" and packed.sorted_indices.device.type == "cuda"
    lstm = nn.LSTM(3, 5).cuda()
    out, _ = lstm(packed)
    unpacked, lengths = pad_packed_sequence(out)
    assert unpacked.device.type == "cuda" and lengths.tolist() == [4, 2]
    print("ok")
""")


def test_functionals_make_their_masks_and_paddings_on_the_inputs_device():
    env = dict(os.environ)
    env.setdefault("NUMBA_ENABLE_CUDASIM", "1")
    result = subprocess.run([sys.executable, "-c", MADE_ON_THE_INPUTS_DEVICE], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")
