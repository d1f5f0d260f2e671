"""Layer norm prologues: an elementwise tree whose one consumer is layer norm fuses into it.

`fuse_layer_norms(gm)` runs with the other prologue passes, before `fusion.fuse`. For
each ``F.layer_norm`` node (ember_nn's; a normalized_shape of ints, an int or float
eps, a weight and bias each a node or None) or call of exactly ``nn.LayerNorm`` (no hooks)
whose input is an elementwise node used by nothing else, it gathers the elementwise tree
behind it as `fusion` does and replaces tree and norm with one ``call_function`` of a
`FusedGroup` whose program is an ``ember_tensor.fusion.FusedLayerNorm``: eager's layer
norm row kernel reading the tree's values as they are computed, never stored (a
Transformer block's ``norm(x + attention)``, ``F.layer_norm(x * scale + shift, ...)``).
The group's inputs are the tree's, then the weight and bias; an ``nn.LayerNorm`` call is
first written as ``F.layer_norm`` of its parameters (``get_attr`` nodes), so that they
are the group's inputs and get their gradients.

It is a `FusedGroup` like any other: per call, float32/float64 tensors on one device (CPU
or CUDA) of a non-empty broadcast shape ending in normalized_shape, with a weight and
bias of that shape and dtype, run the kernel; anything else (other dtypes, empty inputs,
shapes eager refuses) runs the group's eager composition — the tree's ops, then
``F.layer_norm`` — which also raises eager's errors. Autograd and the ahead-of-time
backward's lowering (which records that composition) are `FusedGroup`'s.
"""
import ember_nn.functional as F
from ember_fx import Node
from ember_tensor import fusion as _fusion

from .fused_reductions import fuse_prologues
from .fusion import fusible_op

__all__ = ["fuse_layer_norms", "layer_norm_of"]

# Parameter names after the input, in F.layer_norm's order.
_SIGNATURE = ("normalized_shape", "weight", "bias", "eps")


def _is_shape(shape):
    return all(isinstance(n, int) and not isinstance(n, bool) for n in shape)


def layer_norm_of(node):
    """(normalized_shape, eps, weight node or None, bias node or None) when `node` is a
    fusible ``F.layer_norm`` of its first argument, else None."""
    if node.op != "call_function" or node.target is not F.layer_norm:
        return None
    if len(node.args) < 2 or len(node.args) > 1 + len(_SIGNATURE) or not isinstance(node.args[0], Node):
        return None
    given = dict(zip(_SIGNATURE, node.args[1:]))
    for key, value in node.kwargs.items():
        if key in given or key not in _SIGNATURE:
            return None   # a repeated or unknown argument: the eager op's business
        given[key] = value
    shape = given.get("normalized_shape")
    shape = (shape,) if isinstance(shape, int) and not isinstance(shape, bool) else shape
    if not isinstance(shape, (tuple, list)) or not shape or not _is_shape(shape) or min(shape) <= 0:
        return None
    eps = given.get("eps", 1e-5)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        return None
    weight, bias = given.get("weight"), given.get("bias")
    if not all(a is None or isinstance(a, Node) for a in (weight, bias)):
        return None
    return tuple(shape), float(eps), weight, bias


def _hookless(module):
    """Whether calling `module` is its forward alone (none of its own hooks)."""
    return not any(getattr(module, name, None) for name in (
        "_forward_hooks", "_forward_hooks_with_kwargs", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs"))


def _functional_layer_norms(gm):
    """Write each call of exactly ``nn.LayerNorm`` (ember_nn's, no hooks) whose input is an
    elementwise node used by nothing else as ``F.layer_norm`` of ``get_attr`` nodes of its
    parameters, in place; how many were written."""
    written = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or len(node.args) != 1 or node.kwargs or not isinstance(node.args[0], Node):
            continue
        source = node.args[0]
        if len(source.users) != 1 or fusible_op(source, gm) in (None, *_fusion.COMPARISONS):
            continue
        module = gm.get_submodule(node.target)
        if type(module).__name__ != "LayerNorm" or not type(module).__module__.startswith("ember_nn") \
                or not _hookless(module):
            continue
        with gm.graph.inserting_before(node):
            weight = gm.graph.get_attr(f"{node.target}.weight") if module.weight is not None else None
            bias = gm.graph.get_attr(f"{node.target}.bias") if module.bias is not None else None
            call = gm.graph.call_function(F.layer_norm, (node.args[0], tuple(module.normalized_shape), weight,
                                                         bias, module.eps))
        node.replace_all_uses_with(call)
        gm.graph.erase_node(node)
        written += 1
    return written


def fuse_layer_norms(gm):
    """Fuse `gm`'s layer norms with the elementwise trees feeding them, in place.

    Args:
        gm: a captured GraphModule (its code is regenerated when anything changes).

    Returns:
        The `FusedGroup`\\ s made (programs: ``FusedLayerNorm``), in graph order.
    """
    if _functional_layer_norms(gm):
        gm.recompile()

    def consumer(node, root_module):
        found = layer_norm_of(node)
        if found is None:
            return None
        shape, eps, weight, bias = found
        return lambda program: _fusion.FusedLayerNorm(program, shape, eps, weight is not None, bias is not None)
    return fuse_prologues(gm, consumer, "fused_layer_norm")
