"""ShapeProp: run a GraphModule once and record, on each node, what its value looked like
(``torch.fx.passes.shape_prop``).

After ``ShapeProp(gm).propagate(*inputs)``, every node whose value is a tensor has
``node.meta["tensor_meta"]`` (a TensorMetadata: shape, dtype, requires_grad, stride,
memory_format, ...), a tuple or list of them for a node returning several tensors, and
every node has ``node.meta["type"]``, the Python type of its value.
"""
from collections import namedtuple

from ember_tensor import Tensor, channels_last, channels_last_3d, contiguous_format

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]

TensorMetadata = namedtuple("TensorMetadata", ["shape", "dtype", "requires_grad", "stride", "memory_format",
                                               "is_quantized", "qparams"])
TensorMetadata.__doc__ = "What ShapeProp records of a tensor value (PyTorch's fields; ember has no quantized tensors)."


def _extract_tensor_metadata(result):
    memory_format = None
    for candidate in (contiguous_format, channels_last, channels_last_3d):
        try:
            if result.is_contiguous(memory_format=candidate):
                memory_format = candidate
                break
        except (RuntimeError, ValueError):
            continue  # channels_last asked of a tensor of the wrong rank
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(), memory_format,
                          False, {})


class ShapeProp(Interpreter):
    """An Interpreter that records each node's tensor metadata in ``node.meta``.

    >>> import ember_tensor as torch
    >>> from ember_fx import symbolic_trace
    >>> gm = symbolic_trace(lambda x: x.sum(0))
    >>> _ = ShapeProp(gm).propagate(torch.ones(2, 3))
    >>> [tuple(n.meta["tensor_meta"].shape) for n in gm.graph.nodes]
    [(2, 3), (3,), (3,)]
    """

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        if fake_mode is not None:
            raise NotImplementedError("ShapeProp's fake_mode is not provided: ember has no fake tensors")

    def run_node(self, n):
        result = super().run_node(n)
        found_tensor = [False]

        def extract(value):
            if isinstance(value, Tensor):
                found_tensor[0] = True
                return _extract_tensor_metadata(value)
            return value

        meta = map_aggregate(result, extract)
        if found_tensor[0]:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the module on `args` (recording metadata on the way) and return its result."""
        return super().run(*args)
