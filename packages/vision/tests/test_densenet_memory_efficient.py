"""DenseNet(memory_efficient=True) recomputes each layer's bottleneck in backward
(torch.utils.checkpoint), as torchvision does: the same outputs and gradients, and the
region keeps none of its activations."""
import ember_autograd  # noqa: F401 - backward
import ember_tensor as torch
from ember_autograd.graph import saved_tensors_hooks
from ember_vision.models import DenseNet


def _run(memory_efficient):
    torch.manual_seed(0)
    model = DenseNet(growth_rate=4, block_config=(2, 2), num_init_features=8, bn_size=2, num_classes=3,
                     memory_efficient=memory_efficient).eval()
    x = torch.randn(2, 3, 32, 32, requires_grad=True)
    out = model(x)
    out.sum().backward()
    return out.detach(), x.grad, [p.grad for p in model.parameters()]


def test_memory_efficient_gives_the_same_outputs_and_gradients():
    plain, efficient = _run(False), _run(True)
    assert torch.allclose(plain[0], efficient[0], atol=1e-6)
    assert torch.allclose(plain[1], efficient[1], atol=1e-6)
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(plain[2], efficient[2]))


def test_the_bottleneck_is_checkpointed():
    """The bottleneck runs again in backward, and what its ops save in forward never reaches
    an outer saved_tensors_hooks pair (checkpoint's own pack hook keeps a position instead),
    while the layer's second conv, outside the checkpoint, saves its weight as usual."""
    model = DenseNet(growth_rate=4, block_config=(2,), num_init_features=8, bn_size=2, num_classes=3,
                     memory_efficient=True)
    layer = model.features.denseblock1.denselayer1
    calls = []
    original = layer.bn_function
    layer.bn_function = lambda inputs: calls.append(1) or original(inputs)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        out = layer(torch.randn(1, 8, 8, 8, requires_grad=True))
    assert len(calls) == 1
    assert any(t is layer.conv2.weight for t in seen)
    assert not any(t is layer.conv1.weight for t in seen)
    out.sum().backward()
    assert len(calls) == 2 and layer.conv1.weight.grad is not None
