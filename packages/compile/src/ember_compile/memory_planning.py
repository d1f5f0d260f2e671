"""Memory planning for fused groups: matmul epilogues run in place, dead inputs give
their buffers to the group's result.

After `fusion.fuse`, `plan_memory(gm, groups)` looks at each `FusedGroup` call's inputs
with the graph's liveness: an input produced inside the graph by an op that always
returns fresh memory (a product below, another fused group, a fusible elementwise op,
softmax, log_softmax, gelu, silu, layer_norm),
whose only user is this group (so it is no graph input, no output, has no view and no
later reader), is *dead* once the group has read it. The group then runs its kernel with
``reuse=`` that input (`ember_tensor.fusion.FusedElementwise`): when the input is
contiguous with the result's shape and dtype, the result is written into its memory —
each element is read before the same element is written, so the values are those of a
new tensor, bit for bit — otherwise (broadcasting enlarges it, the dtype promotes, a
strided layout) into a new tensor as before.

**Epilogues.** A product — ``@``/``matmul``, ``mm``, ``addmm``, ``bmm``, ``baddbmm``,
``F.linear``, ``F.conv2d`` and exactly ``nn.Linear``/``nn.Conv2d`` — stays a BLAS call;
the elementwise group that is its only user (the bias add and activation, ``tanh(fc(x))
* 2``) runs right after it on its buffer, while it is hot in cache, with no second
allocation. A single fusible op consuming a product (``relu(x @ w)``) becomes a group of
one for that purpose, unless it may pass the product's element through unchanged (relu,
abs, maximum, minimum, where on it directly): written in place, LLVM makes that store a
masked store, measured 2x slower than a new tensor, so ``relu(x @ w)`` and ``nn.Linear``
→ ``nn.ReLU`` keep the eager relu. An input that is a product is preferred to other dead
inputs.

**Across calls.** A fused elementwise group's new result may take the memory of its
previous call's result when that is dead — no tensor, view, autograd node or NumPy array
holds it (`ember_tensor.fusion`'s ``recycle``; kept from 1 MiB, one block a group). A
result past malloc's heap (32 MiB) is otherwise fresh memory each call, faulted in page
by page as the kernel writes it.

**When.** Only when the group records no autograd node: grad mode off, or none of the
group's inputs requires grad (decided per call, the branch `FusedGroup` already takes).
A group under autograd saves its inputs for its backward, and a training call lowered
with the ahead-of-time backward (`joint/`) runs its ops unfused under a trace, where a
group runs its eager composition: neither ever sees an overwritten value. A product of
a module with forward hooks (its own; global hooks are not seen, as elsewhere in the
compiler) is not overwritten, since a hook may keep the output.
"""
import operator

import ember_nn
import ember_nn.functional as F
from ember_fx import Node
from ember_tensor import fusion as _fusion
from ember_tensor.dispatch import Operator

from .capture import switches_grad_mode
from .fusion import FusedGroup, fusible_op, replace_with_group

__all__ = ["plan_memory", "BufferReuse", "is_product"]

_PRODUCT_OPS = frozenset({"matmul", "mm", "addmm", "bmm", "baddbmm", "conv2d"})
_PRODUCT_FUNCTIONS = {operator.matmul: "matmul", F.linear: "linear", F.conv2d: "conv2d"}
_PRODUCT_MODULES = (ember_nn.Linear, ember_nn.Conv2d)
# Ops outside the fusible set whose result is always a new tensor (never an input or a
# view): their dead results may take a group's result too.
_FRESH_OPS = frozenset({"softmax", "log_softmax", "gelu", "silu", "layer_norm"})
_FRESH_FUNCTIONS = frozenset({F.softmax, F.log_softmax, F.gelu, F.silu, F.layer_norm})
_FRESH_MODULES = (ember_nn.Softmax, ember_nn.LogSoftmax, ember_nn.GELU, ember_nn.SiLU, ember_nn.LayerNorm)
_HOOK_TABLES = ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called")


def _is_one_of(node, root_module, ops, functions, modules):
    """Whether `node` calls one of `ops` (ember op or tensor method names, not in place),
    `functions` or exactly one of the module classes `modules` (a subclass's forward may
    return anything), with no ``out=``."""
    if not isinstance(node, Node) or "out" in node.kwargs:
        return False
    if node.op == "call_function":
        target = node.target
        if isinstance(target, Operator):
            return not target.inplace and target.name in ops
        return target in functions
    if node.op == "call_method":
        return node.target in ops
    if node.op == "call_module":
        return type(root_module.get_submodule(node.target)) in modules
    return False


def is_product(node, root_module):
    """Whether `node` is a BLAS product (matmul family, linear, conv2d) writing a new tensor."""
    return _is_one_of(node, root_module, _PRODUCT_OPS, _PRODUCT_FUNCTIONS, _PRODUCT_MODULES)


def _writes_fresh_memory(node, root_module):
    """Whether `node`'s result is always a new tensor (never an input, a view or a cached
    value)."""
    if is_product(node, root_module):
        return True
    if node.op == "call_function" and isinstance(node.target, FusedGroup):
        return True
    if fusible_op(node, root_module) is not None:
        return True
    return _is_one_of(node, root_module, _FRESH_OPS, _FRESH_FUNCTIONS, _FRESH_MODULES)


class BufferReuse:
    """Which input of a fused group its result may be written into, and when.

    Attributes:
        index: the input's position in the group's call.
        source: the graph node producing it (its name is logged).
        epilogue: whether that node is a product (the group is its epilogue).
        module: the producing submodule (``nn.Linear``) whose hooks forbid it, or None.
    """

    def __init__(self, index, source, epilogue, module=None):
        self.index = index
        self.source = source
        self.epilogue = epilogue
        self.module = module

    def input_index(self, inputs):
        """The input to write into on this call, or None (a hook may hold the product)."""
        module = self.module
        if module is not None and any(getattr(module, table, None) for table in _HOOK_TABLES):
            return None
        if inputs[self.index].requires_grad:   # a leaf or a value some node saved
            return None
        return self.index

    def describe(self, group_name):
        """One line for the ``fusion`` log."""
        what = f"epilogue of {self.source.name} (a BLAS product)" if self.epilogue else \
            f"reuses the buffer of {self.source.name} (dead after it)"
        return f"{group_name}: in place, {what}, when it records no autograd node and the shapes, dtype " \
               "and contiguity match"


# Ops whose result may be one of their operands unchanged (relu: x where x >= 0). A
# program ending in one applied to input k would store, in place, the value it loaded
# from k on some elements: LLVM then turns the store into a masked store (vmaskmovps), which
# measured 2x slower than writing a new tensor (relu of 64x512 float32: 21 vs 9 us).
_PASS_THROUGH = frozenset({"relu", "abs", "maximum", "minimum", "where"})


def _stores_an_input_back(steps, index):
    """Whether the program's result may be input `index`'s own element, unchanged."""
    op, args = steps[-1]
    return op in _PASS_THROUGH and ("in", index) in args


def _dead_inputs(call, root_module):
    """(index, node) of `call`'s inputs whose memory is free once it has read them and
    that the group can write into at full speed."""
    steps = call.target.program.steps
    return [(i, a) for i, a in enumerate(call.args)
            if isinstance(a, Node) and len(a.users) == 1 and _writes_fresh_memory(a, root_module)
            and not _stores_an_input_back(steps, i)]


def plan_memory(gm, groups):
    """Give `gm`'s fused groups their in-place plans; make single elementwise ops on a
    product their epilogue groups.

    Args:
        gm: the GraphModule after `fusion.fuse` (recompiled when groups are added).
        groups: the groups `fuse` returned.

    Returns:
        All fused groups, in graph order, each with ``reuse`` set (a `BufferReuse`) or None.
    """
    graph = gm.graph
    if switches_grad_mode(graph):
        return groups
    added = 0
    for node in list(graph.nodes):
        if node.op == "call_function" and isinstance(node.target, FusedGroup):
            continue
        op = fusible_op(node, gm)
        if op is None:
            continue
        if op not in _PASS_THROUGH and any(is_product(a, gm) and len(a.users) == 1 for a in node.args):
            replace_with_group(gm, [node], {node: op}, f"fused_{len(groups) + added}")
            added += 1
    if added:
        gm.recompile()
    planned = []
    for call in graph.nodes:
        if not (call.op == "call_function" and isinstance(call.target, FusedGroup)):
            continue
        group = call.target
        elementwise = isinstance(group.program, _fusion.FusedElementwise)
        # Across calls: a new result may take the previous call's result's memory once that
        # is dead (`FusedElementwise`'s `recycle`).
        group.recycle = elementwise
        # A fused reduction's result is smaller than its inputs: it writes no input's memory.
        dead = _dead_inputs(call, gm) if elementwise else []
        if dead:
            # A product first: its buffer was just written, the group is its epilogue.
            index, source = next(((i, a) for i, a in dead if is_product(a, gm)), dead[0])
            epilogue = is_product(source, gm)
            module = gm.get_submodule(source.target) if source.op == "call_module" else None
            group.reuse = BufferReuse(index, source, epilogue, module)
        planned.append(group)
    return planned
