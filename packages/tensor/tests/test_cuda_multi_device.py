"""The notes' multi-GPU "CUDA semantics" snippet, run as written on simulated devices.

Numba's simulator has one GPU; EMBER_CUDASIM_DEVICES=3 makes ember present three, so the
current-device rules can be checked without GPUs: allocation on the current device, ops
on their inputs' device (whatever is current), errors for ops across devices, copies
between devices, per-device memory statistics. Runs in a fresh interpreter because the
device count is read when CUDA starts.
"""
import pytest

import ember_tensor as et
from cuda_guard import run_on_simulated_devices

pytestmark = pytest.mark.skipif(
    not et.cuda.is_available() or "simulator" not in et.cuda.get_device_name().lower(),
    reason="simulates several devices on Numba's CUDA simulator")

SCRIPT = """
    import ember_tensor as torch

    assert torch.cuda.device_count() == 3
    cuda = torch.device('cuda')     # Default CUDA device
    cuda0 = torch.device('cuda:0')
    cuda2 = torch.device('cuda:2')  # GPU 2 (these are 0-indexed)

    x = torch.tensor([1., 2.], device=cuda0)
    assert x.device == torch.device(type='cuda', index=0)
    y = torch.tensor([1., 2.]).cuda()
    assert y.device == torch.device(type='cuda', index=0)

    before = [torch.cuda.memory_allocated(i) for i in range(3)]
    with torch.cuda.device(1):
        # allocates a tensor on GPU 1
        a = torch.tensor([1., 2.], device=cuda)
        # transfers a tensor from CPU to GPU 1
        b = torch.tensor([1., 2.]).cuda()
        assert a.device == b.device == torch.device('cuda:1')
        # You can also use ``Tensor.to`` to transfer a tensor:
        b2 = torch.tensor([1., 2.]).to(device=cuda)
        assert b.device == b2.device == torch.device(type='cuda', index=1)
        c = a + b
        assert c.device == torch.device(type='cuda', index=1)
        z = x + y
        assert z.device == torch.device(type='cuda', index=0)
        # even within a context, you can specify the device
        # (or give a GPU index to the .cuda call)
        d = torch.randn(2, device=cuda2)
        e = torch.randn(2).to(cuda2)
        f = torch.randn(2).cuda(cuda2)
        assert d.device == e.device == f.device == torch.device(type='cuda', index=2)
    assert torch.cuda.current_device() == 0
    assert torch.cuda.memory_allocated(1) > before[1] and torch.cuda.memory_allocated(2) > before[2]

    # ops run on their inputs' device, whichever device is current
    g = a * 3
    assert g.device == torch.device('cuda:1') and g.tolist() == [3.0, 6.0]
    assert (a @ b).device == torch.device('cuda:1') and a.sum().item() == 3.0

    # cross-GPU ops are not allowed; copies are
    try:
        x + a
    except RuntimeError as error:
        assert str(error) == ("Expected all tensors to be on the same device, but found at least "
                              "two devices, cuda:0 and cuda:1!"), error
    else:
        raise AssertionError("an op across devices did not raise")
    assert (a.to(cuda0) + x).tolist() == [2.0, 4.0]
    x.copy_(a)
    assert x.device == cuda0 and x.tolist() == [1.0, 2.0]
    assert a.new_zeros(3).device == torch.device('cuda:1')
    assert torch.zeros_like(a).device == torch.device('cuda:1')

    torch.cuda.set_device(2)
    assert torch.ones(1, device='cuda').device == cuda2
    with torch.cuda.device_of(a):
        assert torch.cuda.current_device() == 1
    assert torch.cuda.current_device() == 2
    try:
        torch.cuda.set_device(3)
    except RuntimeError as error:
        assert "invalid device ordinal" in str(error)
    else:
        raise AssertionError("set_device(3) did not raise")
    print("ok")
"""


def test_notes_multi_gpu_snippet_on_three_simulated_devices():
    run_on_simulated_devices(SCRIPT, devices=3)


SECOND_DEVICE_SCRIPT = """
    import numpy as np
    import ember_tensor as torch

    x = torch.arange(12.).reshape(3, 4)
    idx, mask = torch.tensor([2, 0, 2]), x > 4
    x1, idx1, mask1 = x.to("cuda:1"), idx.to("cuda:1"), mask.to("cuda:1")
    a = np.array([[4., 1.], [1., 3.]])
    a1 = torch.tensor(a, device="cuda:1")
    before = torch.cuda.memory_allocated(0)
    results = [x1[idx1], x1[:, idx1], x1[mask1], x1.gather(1, idx1.reshape(3, 1)), x1.flip(0),
               x1.scatter_add(0, idx1.reshape(3, 1).expand(3, 4), x1), x1.nonzero(),
               x1.index_put((idx1,), x1[0], accumulate=True), x1.masked_select(mask1),
               torch.repeat_interleave(idx1)]
    expected = [x[idx], x[:, idx], x[mask], x.gather(1, idx.reshape(3, 1)), x.flip(0),
                x.scatter_add(0, idx.reshape(3, 1).expand(3, 4), x), x.nonzero(),
                x.index_put((idx,), x[0], accumulate=True), x.masked_select(mask),
                torch.repeat_interleave(idx)]
    factors = [torch.linalg.inv(a1), torch.linalg.det(a1), torch.linalg.cholesky(a1),
               torch.linalg.solve(a1, a1), torch.linalg.solve_triangular(a1, a1, upper=True)]
    assert all(r.device == torch.device("cuda:1") for r in results + factors)
    assert torch.cuda.current_device() == 0 and torch.cuda.memory_allocated(0) == before
    for r, e in zip(results, expected):
        np.testing.assert_array_equal(r.cpu().numpy(), e.numpy())
    assert np.allclose(factors[0].cpu().numpy(), np.linalg.inv(a))
    assert np.allclose(factors[2].cpu().numpy(), np.linalg.cholesky(a))
    print("ok")
"""


SECOND_DEVICE_NN_SCRIPT = """
    import ember_tensor as torch
    from ember_tensor._ops import nn as N

    x, w = torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3)
    x1, w1 = x.to("cuda:1"), w.to("cuda:1")
    before = torch.cuda.memory_allocated(0)
    y = N.convolution(x1, w1, None, 1, 1, 1, False, 0, 1)
    v, i = N.max_pool_with_indices(y, (2, 2), (2, 2), 0)
    p = N.constant_pad_nd(v, (1, 1), 0.0)
    g = N.convolution_backward_weight(y, x1, (3, 2, 3, 3), 1, 1, 1, 1)
    assert all(t.device == torch.device("cuda:1") for t in (y, v, i, p, g))
    assert torch.cuda.current_device() == 0 and torch.cuda.memory_allocated(0) == before
    assert (y.cpu() - N.convolution(x, w, None, 1, 1, 1, False, 0, 1)).abs().max().item() < 1e-5
    print("ok")
"""


def test_index_and_linalg_ops_run_and_allocate_on_their_inputs_device():
    """Index ops and factorisations of tensors on cuda:1 compute there and allocate nothing
    on the current device (cuda:0)."""
    run_on_simulated_devices(SECOND_DEVICE_SCRIPT, devices=2)


def test_nn_window_ops_on_a_second_device_allocate_and_run_there():
    """Convolution, pooling and padding on cuda:1 allocate there, not on the current device."""
    run_on_simulated_devices(SECOND_DEVICE_NN_SCRIPT, devices=2)
