"""embedding_bag as one op (PyTorch's ``aten::_embedding_bag``): the sum, mean or max of
each bag of embedding rows, computed from the weight in one pass, and its two backward
products (the weight gradient, per_sample_weights' gradient).

The op checks its arguments with PyTorch's errors and calls its device's `sampling`
backend family; indices and offsets travel as int64. ``ember_nn.functional.embedding_bag``
is the API on top (2-D input, max_norm, sparse gradients); the rule in
``ember_autograd._rules.nn`` differentiates it.
"""
from ... import _backends
from ... import _dtype as D
from ..._dispatch import op
from .._iter import common_device
from ._common import array_of, tensor_of

__all__ = ["embedding_bag", "embedding_bag_backward", "embedding_bag_per_sample_weights_backward"]


def _sampling(device):
    """The sampling family of `device`'s backend."""
    return _backends.get(device).sampling


def _check_index_dtype(t, name):
    if t._dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the following scalar types: "
                           f"Long, Int; but got {t.type()} instead (while checking arguments for embedding_bag)")


def _first_outside(storage, indices, num_weights):
    # The error path only: the position and value PyTorch's message names.
    host = storage.to_numpy(indices._data).reshape(-1)
    bad = ((host < 0) | (host >= num_weights)).nonzero()[0][0]
    return int(bad), int(host[bad])


@op()
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    """Bags of rows of `weight` (num, dim) reduced by `mode` (0 sum, 1 mean, 2 max).

    Bag b holds ``indices[offsets[b]:offsets[b + 1]]`` (1-D indices and offsets; with
    `include_last_offset` the last offset ends the last bag, else it runs to the end).
    Entries equal to `padding_idx` (-1: none; non-negative) are skipped: an empty bag gives
    zeros, a mean divides by the kept count. `per_sample_weights` (sum mode) scales each
    entry. `scale_grad_by_freq` and `sparse` only shape the gradient. Returns (output
    (bags, dim), offset2bag, bag_size, max_indices (bags, dim) in max mode, else empty).

    >>> import ember_tensor as et
    >>> from ember_tensor.nn_ops import embedding_bag
    >>> embedding_bag(et.tensor([[0., 1.], [2., 3.]]), et.tensor([0, 1, 1]), et.tensor([0, 1]))[0].tolist()
    [[0.0, 1.0], [4.0, 6.0]]
    """
    _check_index_dtype(indices, "indices")
    _check_index_dtype(offsets, "offsets")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    device = common_device((weight, indices, offsets))
    sampling, storage = _sampling(device), _backends.get(device).storage
    n, num_weights = indices.numel(), weight.shape[0]
    if include_last_offset and offsets.numel() < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    bags = offsets.numel() - 1 if include_last_offset else offsets.numel()
    if offsets.numel():
        first, last = int(offsets._data[0]), int(offsets._data[-1])
        if bags and first != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                               f"from position 0. However, got {first}")
        if last > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                               f"{last}")
    if sampling.any_outside(indices._data, 0, num_weights):
        position, value = _first_outside(storage, indices, num_weights)
        raise RuntimeError(f"Index {position} of input takes value {value} which is not in the valid range "
                         f"[0, {num_weights})")
    psw = None if per_sample_weights is None else array_of(per_sample_weights, array_of(weight).dtype)
    out, offset2bag, bag_size, max_indices = sampling.embedding_bag(
        array_of(weight), indices._data, offsets._data, bags, mode, psw, -1 if padding_idx is None else padding_idx)
    return (tensor_of(out, weight._dtype, device), tensor_of(offset2bag, D.int64, device),
            tensor_of(bag_size, D.int64, device), tensor_of(max_indices, D.int64, device))


@op()
def embedding_bag_backward(grad, indices, offset2bag, bag_size, max_indices, num_weights, scale_grad_by_freq=False,
                           mode=0, per_sample_weights=None, padding_idx=-1):
    """Dense weight gradient (num_weights, dim) of `embedding_bag` from the bags' gradient
    `grad` (bags, dim) and the op's offset2bag, bag_size and max_indices."""
    device = grad._device
    psw = None if per_sample_weights is None else array_of(per_sample_weights, array_of(grad).dtype)
    out = _sampling(device).embedding_bag_backward(
        array_of(grad), indices._data, offset2bag._data, bag_size._data, max_indices._data, num_weights, mode, psw,
        -1 if padding_idx is None else padding_idx, scale_grad_by_freq)
    return tensor_of(out, grad._dtype, device)


@op()
def embedding_bag_per_sample_weights_backward(grad, weight, indices, offset2bag, mode=0, padding_idx=-1):
    """Gradient of `embedding_bag`'s per_sample_weights (sum mode only, as PyTorch's):
    each entry's bag gradient row dotted with the weight row it looked up."""
    if mode != 0:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    device = common_device((grad, weight))
    out = _sampling(device).embedding_bag_per_sample_weights_backward(
        array_of(grad), array_of(weight, array_of(grad).dtype), indices._data, offset2bag._data,
        -1 if padding_idx is None else padding_idx)
    return tensor_of(out, grad._dtype, device)
