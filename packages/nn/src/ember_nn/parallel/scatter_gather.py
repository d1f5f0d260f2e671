"""Split a batch across devices (scatter) and join per-device outputs (gather).

Both go through ``Tensor.to``, which autograd differentiates, so gradients flow from the
gathered output back to the scattered input.
"""
import ember_tensor
from ember_tensor import Tensor

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _chunk_sizes(length, parts):
    base, extra = divmod(length, parts)
    return [base + (1 if i < extra else 0) for i in range(parts) if base + (1 if i < extra else 0) > 0]


def scatter(inputs, target_gpus, dim=0):
    """Split every tensor in `inputs` (nested in tuples, lists, dicts) along `dim` into
    one chunk per device; other objects are repeated. Returns one input per device."""
    devices = [ember_tensor.device(d) if not isinstance(d, int) else ember_tensor.device("cuda", d)
               for d in target_gpus]

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            sizes = _chunk_sizes(obj.size(dim), len(devices))
            return tuple(chunk.to(device) for chunk, device in zip(obj.split(sizes, dim), devices))
        if isinstance(obj, tuple) and obj:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and obj:
            return [list(parts) for parts in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(zip(obj.keys(), parts)) for parts in zip(*map(scatter_map, obj.values()))]
        return [obj for _ in devices]

    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """Scatter positional and keyword arguments; pads the shorter list so both match."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(tuple(i) for i in scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Concatenate per-device outputs along `dim` on `target_device` (-1: the CPU)."""
    if target_device == -1:
        target_device = "cpu"
    elif isinstance(target_device, int):
        target_device = ember_tensor.device("cuda", target_device)

    def gather_map(outs):
        first = outs[0]
        if isinstance(first, Tensor):
            return ember_tensor.cat([o.to(target_device) for o in outs], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            if not all(len(first) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(first)((k, gather_map([d[k] for d in outs])) for k in first)
        return type(first)(map(gather_map, zip(*outs)))

    return gather_map(outputs)
