"""Softmax prologues: an elementwise tree whose one consumer is softmax or log_softmax
fuses into it.

`fuse_softmaxes(gm)` runs after `fused_reductions.fuse_reductions` and before
`fusion.fuse`. For each ``softmax``/``log_softmax`` node (the ember op, the tensor
method, ``F.softmax``/``F.log_softmax``, exactly ``nn.Softmax``/``nn.LogSoftmax``; an
int dim, no ``dtype``) whose input is an elementwise node used by nothing else, it gathers
the elementwise tree behind it as `fusion` does and replaces tree and softmax with one
``call_function`` of a `FusedGroup` whose program is an ``ember_tensor.fusion.FusedSoftmax``:
eager's softmax row kernel reading the tree's values as they are computed, never stored
(``torch.softmax(x * scale + mask, -1)``, ``F.log_softmax(logits / T, -1)``, attention's
``(q @ k.transpose(-2, -1)) * scale`` then softmax: the product stays BLAS's).

It is a `FusedGroup` like any other: per call, float32/float64 tensors on one device (CPU
or CUDA) of a non-empty broadcast shape of at least one dim run the kernel; anything else
(other dtypes, empty or 0-d inputs, a dim out of range) runs the group's eager
composition — the tree's ops, then the softmax — which also raises eager's errors.
Autograd and the ahead-of-time backward's lowering (which records that composition)
are `FusedGroup`'s.
"""
import ember_nn.functional as F
from ember_fx import Node
from ember_tensor import fusion as _fusion
from ember_tensor.dispatch import Operator

from .fused_reductions import fuse_prologues

__all__ = ["fuse_softmaxes", "softmax_of"]

_NAMES = {"softmax": False, "log_softmax": True}
_FUNCTIONS = {F.softmax: False, F.log_softmax: True}
_MODULES = {"Softmax": False, "LogSoftmax": True}
# Parameter names after the input, in each form's order.
_SIGNATURES = {"function": ("dim", "_stacklevel", "dtype"), "op": ("dim", "dtype")}


def softmax_of(node, root_module):
    """(log, dim) when `node` is a fusible softmax (log: log_softmax) of its first
    argument, else None."""
    if node.op == "call_module":
        module = root_module.get_submodule(node.target)
        log = _MODULES.get(type(module).__name__) if type(module).__module__.startswith("ember_nn") else None
        if log is None or len(node.args) != 1 or node.kwargs:
            return None
        given = {"dim": module.dim}
    else:
        if node.op == "call_function" and node.target in _FUNCTIONS:
            log, signature = _FUNCTIONS[node.target], _SIGNATURES["function"]
        elif node.op == "call_function" and isinstance(node.target, Operator) and not node.target.inplace \
                and node.target.name in _NAMES:
            log, signature = _NAMES[node.target.name], _SIGNATURES["op"]
        elif node.op == "call_method" and node.target in _NAMES:
            log, signature = _NAMES[node.target], _SIGNATURES["op"]
        else:
            return None
        if not node.args or len(node.args) > 1 + len(signature):
            return None
        given = dict(zip(signature, node.args[1:]))
        for key, value in node.kwargs.items():
            if key in given or key not in signature:
                return None   # a repeated or unknown argument: the eager op's business
            given[key] = value
    dim = given.get("dim")
    if given.get("dtype") is not None or not isinstance(node.args[0], Node):
        return None
    if not isinstance(dim, int) or isinstance(dim, bool):
        return None   # dim=None (the implicit dim, with its warning) stays eager's
    return log, dim


def fuse_softmaxes(gm):
    """Fuse `gm`'s softmax and log_softmax nodes with the elementwise trees feeding them,
    in place.

    Args:
        gm: a captured GraphModule (its code is regenerated when anything fuses).

    Returns:
        The `FusedGroup`\\ s made (programs: ``FusedSoftmax``), in graph order; none in a
        graph that switches grad mode.
    """
    def consumer(node, root_module):
        found = softmax_of(node, root_module)
        if found is None:
            return None
        log, dim = found
        return lambda program: _fusion.FusedSoftmax(program, dim, log)
    return fuse_prologues(gm, consumer, "fused_softmax")
