"""The backward engine: runs the recorded graph from its roots in topological order.

Iterative (no recursion, so graphs of any depth work): count how many edges lead into
each node, then run nodes whose gradients are complete, newest first (PyTorch's order).
Gradients arriving at the same input are summed; `validate_grad` fits each one to its
input's shape and dtype.
"""
import heapq

from ember_tensor import Tensor

from . import _grad_mode, anomaly_mode, profiler
from ._graph import AccumulateGrad, accumulate_grad, validate_grad

__all__ = ["run_backward"]


def _dependencies(roots):
    """Number of edges into each node reachable from `roots`."""
    deps = {}
    # Each node once: two roots may be outputs of one node (the pieces of a split), whose
    # edges must count once, or its children would wait for a second visit that never comes.
    stack = list(dict.fromkeys(node for node in roots if node is not None))
    seen = set(stack)
    while stack:
        node = stack.pop()
        for edge in node._next:
            if edge is None:
                continue
            child = edge[0]
            if child is None:
                continue
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps


def _needed_nodes(roots, targets):
    """Nodes from which some node of `targets` can be reached (they must run)."""
    needed = {}
    for root in roots:
        if root is None or root in needed:
            continue
        # Iterative post-order walk.
        stack = [(root, iter(root._next))]
        needed[root] = root in targets
        while stack:
            node, children = stack[-1]
            for edge in children:
                if edge is None or edge[0] is None:
                    continue
                child = edge[0]
                if child not in needed:
                    needed[child] = child in targets
                    stack.append((child, iter(child._next)))
                    break
                if needed[child]:
                    needed[node] = True
            else:
                stack.pop()
                if stack and needed[node]:
                    needed[stack[-1][0]] = True
    return {node for node, flag in needed.items() if flag}


def run_backward(roots, root_grads, keep_graph, create_graph, capture=None, accumulate=True,
                 capture_tensors=None):
    """Backpropagate `root_grads` from edges `roots`.

    Args:
        roots: edges ``(node, output_nr)`` of the outputs.
        root_grads: one gradient per root.
        keep_graph: keep saved tensors for another backward (``retain_graph``).
        create_graph: record the backward computation itself (higher-order gradients).
        capture: edges whose incoming gradients are wanted (``autograd.grad``'s inputs,
            ``backward(inputs=...)``); only the part of the graph leading to them runs.
        accumulate: whether leaf gradients go into ``.grad`` (False for autograd.grad).
        capture_tensors: the tensors of the `capture` edges, when non-leaf ones should
            accumulate into their ``.grad`` (``backward(inputs=...)``).

    Returns:
        The gradients arriving at the `capture` edges (None where none arrived).
    """
    root_nodes = [edge[0] for edge in roots]
    deps = _dependencies(root_nodes)
    captured = None
    needed = None
    capture_at = {}
    if capture is not None:
        captured = [None] * len(capture)
        for i, (node, nr) in enumerate(capture):
            capture_at.setdefault(node, []).append((nr, i))
        needed = _needed_nodes(root_nodes, capture_at)

    buffers = {}
    for (node, nr), grad in zip(roots, root_grads):
        _add_to_buffer(buffers, node, nr, grad)

    ready = []
    for node in set(root_nodes):
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._seq, node))

    prev_mode = _grad_mode.state.enabled
    _grad_mode.state.enabled = create_graph
    try:
        while ready:
            node = heapq.heappop(ready)[1]
            grads = buffers.pop(node, None)
            outputs = None
            if grads is not None:
                grads = _call_tensor_hooks(node, grads)
                if node in capture_at:
                    for nr, i in capture_at[node]:
                        captured[i] = grads[nr]
                runs = needed is None or _runs(node, needed)
                if node.__class__ is AccumulateGrad:
                    if accumulate and (needed is None or node in capture_at):
                        _run_pre_hooks(node, grads)
                        grad = grads[0]
                        del grads
                        variable = node.variable
                        if variable is not None:
                            accumulate_grad(variable, grad)
                    runs = False
                elif node in capture_at and capture_tensors is not None:
                    # backward(inputs=[non-leaf]): its .grad accumulates like a leaf's.
                    for nr, i in capture_at[node]:
                        if grads[nr] is not None:
                            _accumulate_non_leaf(capture_tensors[i], grads[nr])
                if runs:
                    outputs = _apply(node, grads, needed, keep_graph)
            _propagate(node, outputs, deps, buffers, ready)
    finally:
        _grad_mode.state.enabled = prev_mode
    return captured


def _runs(node, needed):
    for edge in node._next:
        if edge is not None and edge[0] is not None and edge[0] in needed:
            return True
    return False


def _apply(node, grads, needed, keep_graph):
    grads = _run_pre_hooks(node, grads)
    if needed is not None:
        node._needs = tuple(e is not None and e[0] is not None and e[0] in needed for e in node._next)
    if profiler._active:
        # PyTorch's name for a node's work in a profile (its ops become children).
        event = profiler._open_event("autograd::engine::evaluate_function: " + node.name())
        try:
            outputs = _run_node(node, grads)
        finally:
            profiler._close_event(event)
    else:
        outputs = _run_node(node, grads)
    node._needs = None
    if node._post_hooks:
        for hook in tuple(node._post_hooks.values()):
            result = hook(tuple(outputs), tuple(grads))
            if result is not None:
                outputs = list(result)
    if not keep_graph:
        node._release()
    return outputs


def _run_node(node, grads):
    if anomaly_mode._enabled:
        return anomaly_mode.checked_apply(node, grads)
    return node.apply(grads)


def _propagate(node, outputs, deps, buffers, ready):
    metas = node._input_meta
    for i, edge in enumerate(node._next):
        if edge is None:
            continue
        child, nr = edge
        if child is None:
            continue
        if outputs is not None:
            grad = outputs[i] if i < len(outputs) else None
            if grad is not None:
                meta = metas[i]
                if meta is not None:
                    grad = validate_grad(grad, meta)
                _add_to_buffer(buffers, child, nr, grad)
        left = deps[child] - 1
        deps[child] = left
        if left == 0:
            heapq.heappush(ready, (-child._seq, child))


def _add_to_buffer(buffers, node, nr, grad):
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * max(nr + 1, _n_outputs(node))
    elif nr >= len(slots):
        slots.extend([None] * (nr + 1 - len(slots)))
    old = slots[nr]
    if old is None:
        slots[nr] = grad
    else:
        # A sparse gradient goes on the right: dense + sparse is defined, sparse + dense is not.
        slots[nr] = grad + old if old.is_sparse and not grad.is_sparse else old + grad


def _n_outputs(node):
    return getattr(node, "_n_outputs", 1)


def _call_tensor_hooks(node, grads):
    """Tensor hooks (``t.register_hook``) and ``retain_grad`` of the node's outputs."""
    hooks = node._tensor_pre_hooks
    if hooks:
        for nr, by_id in hooks.items():
            if nr < len(grads) and grads[nr] is not None:
                for hook in tuple(by_id.values()):
                    result = hook(grads[nr])
                    if result is not None:
                        grads[nr] = result
    if node.__class__ is AccumulateGrad:
        variable = node.variable
        meta = variable._autograd_meta if variable is not None else None
        if meta is not None and meta.hooks and grads[0] is not None:
            for hook in tuple(meta.hooks.values()):
                result = hook(grads[0])
                if result is not None:
                    grads[0] = result
    retains = node._retains_grad
    if retains:
        for nr, ref in retains.items():
            t = ref()
            if t is not None and nr < len(grads) and grads[nr] is not None:
                _accumulate_non_leaf(t, grads[nr])
    return grads


def _accumulate_non_leaf(t, grad):
    if t._grad is None:
        t._grad = grad.clone() if not _grad_mode.state.enabled else grad
    else:
        t._grad = t._grad + grad


def _run_pre_hooks(node, grads):
    hooks = node._pre_hooks
    if hooks:
        for hook in tuple(hooks.values()):
            result = hook(tuple(grads))
            if result is not None:
                grads = list(result)
    return grads


def is_tensor(x):
    return isinstance(x, Tensor)
