"""Copies of a module on other devices whose parameters are differentiable functions of
the original's, so that gradients of every replica reach the original parameters."""
from ember_tensor import Tensor

__all__ = ["replicate"]


def _replica(module, device, copies):
    if id(module) in copies:
        return copies[id(module)]
    replica = object.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    copies[id(module)] = replica
    # Parameters become plain (non-leaf) tensors on the device, as in PyTorch's replicas.
    replica._parameters = {k: None if p is None else p.to(device) for k, p in module._parameters.items()}
    replica._buffers = {k: None if b is None else b.to(device) for k, b in module._buffers.items()}
    replica._modules = {k: None if m is None else _replica(m, device, copies) for k, m in module._modules.items()}
    replica._is_replica = True
    return replica


def replicate(network, devices, detach=False):
    """One copy of `network` per device (shared submodules stay shared in each copy)."""
    replicas = [_replica(network, device, {}) for device in devices]
    if detach:
        for replica in replicas:
            for m in replica.modules():
                m._parameters = {k: v.detach() if isinstance(v, Tensor) else v for k, v in m._parameters.items()}
    return replicas
