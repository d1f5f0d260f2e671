"""Recording the graph: the dispatcher wrapper that autograd registers on every op.

Fast path (no input requires grad, or grad mode off): a scan of the arguments, then one
thread-local flag and one table lookup, then the op runs as it would without autograd.
Otherwise the op runs with grad mode off and its outputs get a node built from the op's
rule (`_rules`). In-place ops rebase the history of the tensor they modify; in-place ops
on views rebase the base's history through `CopySlices`, as PyTorch does.
"""
from ember_tensor import Tensor
from ember_tensor.dispatch import call_impl

from . import _grad_mode, anomaly_mode
from ._graph import (
    AutogradMeta, Node, SavedTensor, gradient_edge, meta_of, refresh_view, short_name,
    validate_grad,
)
from ._rules import COMPOSITE, NOT_DIFFERENTIABLE, TABLE
from ._rules._registry import _Result

__all__ = ["record", "RuleNode", "CopySlices"]

_state = _grad_mode.state
# In-place ops that may touch a tensor requiring grad without a derivative of their own.
_INPLACE_WITHOUT_RULE_OK = {"detach_"}
# In-place ops that change only a tensor's shape/strides, never its memory.
_INPLACE_GEOMETRY = {"unsqueeze_", "squeeze_", "transpose_", "t_", "as_strided_"}


def _requires_grad_anywhere(args, kwargs):
    for a in args:
        cls = a.__class__
        if cls is Tensor or isinstance(a, Tensor):
            if a._requires_grad:
                return True
        elif cls is list or cls is tuple:
            for x in a:
                if isinstance(x, Tensor) and x._requires_grad:
                    return True
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, Tensor) and a._requires_grad:
                return True
    return False


def record(op, args, kwargs, redispatch):
    """The autograd wrapper: ``wrapper(op, args, kwargs, redispatch)`` of the dispatcher."""
    # Fast path, the scan of `_requires_grad_anywhere` inlined for plain tensor arguments:
    # this runs on every op call, and most see no tensor that requires grad.
    for a in args:
        cls = a.__class__
        if cls is Tensor:
            if a._requires_grad:
                break
        elif cls is not float and cls is not int and _requires_grad_anywhere((a,), None):
            break  # (a Python number, the other common argument, holds no tensor)
    else:
        if not kwargs:
            if redispatch is call_impl:  # no wrapper inside this one: run the op, a frame less
                return op.impl(*args)
            return redispatch(op, args, kwargs)
        if not _requires_grad_anywhere((), kwargs):
            if redispatch is call_impl:
                return op.impl(*args, **kwargs)
            return redispatch(op, args, kwargs)
    if not _state.enabled:
        return redispatch(op, args, kwargs)
    # An op the table does not name is differentiated through its parts when it says it
    # is made of ops (layers above register such composites: ember-nn's ctc_loss, ...).
    entry = TABLE.get(op.name, COMPOSITE if op.composite else NOT_DIFFERENTIABLE)
    if entry is COMPOSITE:
        return redispatch(op, args, kwargs)
    if entry is NOT_DIFFERENTIABLE:
        if op.inplace and op.name not in _INPLACE_WITHOUT_RULE_OK:
            _check_inplace_target(args[0])
            if args[0]._requires_grad:
                raise RuntimeError(f"the derivative for '{op.name}' is not implemented.")
        _state.enabled = False
        try:
            return redispatch(op, args, kwargs)
        finally:
            _state.enabled = True
    return _record(op, entry, args, kwargs, redispatch)


def _record(op, rule, args, kwargs, redispatch):
    if kwargs and kwargs.get("out") is not None:
        raise RuntimeError(
            f"{op.name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad.")
    inputs = rule.extractor(op)(args, kwargs)
    # Preallocated and filled by index: this loop runs on every recorded op call.
    edges = [None] * len(inputs)
    metas = [None] * len(inputs)
    wanted = False
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t._requires_grad:
            edges[i] = gradient_edge(t)
            metas[i] = (t._data.shape, t._dtype)
            wanted = True
    if op.inplace:
        return _record_inplace(op, rule, args, kwargs, redispatch, edges, metas)
    if not wanted:
        _state.enabled = False
        try:
            return redispatch(op, args, kwargs)
        finally:
            _state.enabled = True
    to_save = rule.save(*args, **kwargs) if rule.save is not None else None
    _state.enabled = False
    try:
        out = redispatch(op, args, kwargs)
    finally:
        _state.enabled = True
    first = args[0] if args else None
    if out is first:
        return out  # the op returned its input (contiguous(), to() with nothing to do)
    node = rule.make_node(args, kwargs)
    node._next = tuple(edges)
    node._input_meta = tuple(metas)
    if out.__class__ is Tensor or isinstance(out, Tensor):
        if out._dtype.is_floating_point or out._dtype.is_complex:  # _set_history, inline: one output is the common case
            out._grad_fn = node
            out._requires_grad = True
            out._output_nr = 0
        if first.__class__ is Tensor or isinstance(first, Tensor):
            if out._storage is first._storage:
                _make_view(out, first, op, args, kwargs, None)
    else:
        n = len(out)
        node._n_outputs = n
        is_view = isinstance(first, Tensor)
        for i, o in enumerate(out):
            if isinstance(o, Tensor):
                _set_history(o, node, i)
                if is_view and o._storage is first._storage:
                    _make_view(o, first, op, args, kwargs, i, multi=node if n > 1 else None)
    if to_save is not None:
        node._saved = _pack(to_save, out)
    if anomaly_mode._enabled:
        anomaly_mode.record_trace(node)
    return out


def _set_history(t, node, output_nr):
    if not (t._dtype.is_floating_point or t._dtype.is_complex):
        return  # integer and bool outputs never require grad
    t._grad_fn = node
    t._requires_grad = True
    t._output_nr = output_nr


def _pack(values, out):
    packed = list(values)
    for i, v in enumerate(packed):
        if v.__class__ is _Result:
            o = out if v.index is None else out[v.index]
            packed[i] = SavedTensor(o, is_output=o._grad_fn is not None)
        elif isinstance(v, Tensor):
            packed[i] = SavedTensor(v)
    return packed


# -- views ------------------------------------------------------------------------------

def _make_view(view, base, op, args, kwargs, index, multi=None):
    """Remember how `view` was made from its base, to replay it after in-place changes."""
    rest = args[1:]

    if index is None:
        def step(x):
            return op(x, *rest, **kwargs)
    else:
        def step(x):
            return op(x, *rest, **kwargs)[index]

    base_meta = base._autograd_meta
    if base_meta is not None and base_meta.view_base is not None:
        root = base_meta.view_base
        parent = base_meta.view_replay

        def replay(x):
            return step(parent(x))
    else:
        root, replay = base, step
    meta = view._autograd_meta
    if meta is None:
        meta = view._autograd_meta = AutogradMeta()
    meta.view_base = root
    meta.view_replay = replay
    meta.view_version = view._storage.version
    meta.multi_view_of = multi


def _as_strided_replay(view, base):
    """Replay of a view that was not recorded: its geometry relative to the base."""
    size, stride = tuple(view.shape), view.stride()
    offset = view.storage_offset() - base.storage_offset()

    def replay(x):
        return x.as_strided(size, stride, x.storage_offset() + offset)
    return replay


def _view_base(t):
    meta = t._autograd_meta
    if meta is not None and meta.view_base is not None:
        return meta.view_base
    return t._view_base


def _check_inplace_target(t):
    if t._requires_grad and t._grad_fn is None:
        base = _view_base(t)
        if base is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    base = _view_base(t)
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    meta = t._autograd_meta
    if meta is not None and meta.multi_view_of is not None:
        raise RuntimeError(
            f"Output {t._output_nr} of {short_name(meta.multi_view_of)} is a view and is being modified "
            "inplace. This view is the output of a function that returns multiple views. Such functions "
            "do not allow the output views to be modified inplace. You should replace the inplace "
            "operation by an out-of-place one.")


# -- in-place ops -----------------------------------------------------------------------

def _record_inplace(op, rule, args, kwargs, redispatch, edges, metas):
    target = args[0]
    _check_inplace_target(target)
    to_save = None
    if rule.save is not None:
        to_save = rule.save(*args, **kwargs)
        if to_save is not None and any(v is target for v in to_save):
            # The formula needs the value from before the op: save a (recorded) copy.
            original = target.clone()
            to_save = tuple(original if v is target else v for v in to_save)
    _state.enabled = False
    try:
        out = redispatch(op, args, kwargs)
    finally:
        _state.enabled = True
    if not any(e is not None for e in edges):
        return out
    node = rule.make_node(args, kwargs)
    node._next = tuple(edges)
    node._input_meta = tuple(metas)
    if op.name in _INPLACE_GEOMETRY:
        if to_save is not None:  # geometry only: no tensor among them
            node._saved = _pack(to_save, target)
        _regeometry(target, node)
        return out
    base = _view_base(target)
    if base is None:
        _rebase(target, node)
    if to_save is not None:
        # After the rebase: a saved result is output 0 of `node`.
        node._saved = _pack(to_save, _as_output_of(target, node) if base is not None else target)
    if base is not None:
        _rebase_view(target, base, node)
    return out


def _regeometry(t, node):
    """An in-place shape op: `t`'s history moves on through `node`; its base's does not,
    since no memory was written (PyTorch keeps the base's grad_fn too)."""
    _rebase(t, node)
    meta = t._autograd_meta
    if meta is not None and meta.view_base is not None:
        # Replays of this view (after an in-place change of its base) use its new geometry.
        meta.view_replay = _as_strided_replay(t, meta.view_base)


def _as_output_of(t, node):
    alias = Tensor._wrap(t._data, t._dtype, t._device, t._storage)
    alias._grad_fn = node
    alias._requires_grad = True
    return alias


def _rebase(t, node):
    """Make `node` the history of `t` (modified in place)."""
    old = t._grad_fn
    t._grad_fn = node
    t._requires_grad = True
    t._output_nr = 0
    # retain_grad() follows the tensor to its new history (PyTorch moves it too).
    meta = t._autograd_meta
    if meta is not None and meta.retains_grad and old is not None and old._retains_grad:
        from ._tensor_api import retain_grad
        for nr, ref in list(old._retains_grad.items()):
            if ref() is t:
                del old._retains_grad[nr]
        meta.retains_grad = False
        retain_grad(t)


def _rebase_view(view, base, node):
    """An in-place op on a view: the base's history becomes CopySlices(base, node)."""
    meta = view._autograd_meta
    if meta is None or meta.view_base is None:
        meta = meta_of(view)
        meta.view_base = base
        meta.view_replay = _as_strided_replay(view, base)
    base_edge = gradient_edge(base) if base._requires_grad else None
    copy_slices = CopySlices(base, meta.view_replay, node)
    copy_slices._next = (base_edge,) + node._next[1:]
    copy_slices._input_meta = ((base._data.shape, base._dtype),) + node._input_meta[1:]
    _rebase(base, copy_slices)
    refresh_view(view, meta)


class CopySlices(Node):
    """The history of a base after an in-place op on one of its views.

    The gradient of the base passes through unchanged outside the view; inside it, it goes
    through the in-place op's node `fn`.
    """

    __slots__ = ("fn", "replay", "base_strides", "base_contiguous")

    def __init__(self, base, replay, fn):
        super().__init__()
        self.fn = fn
        self.replay = replay
        self.base_strides = base.stride()
        self.base_contiguous = base.is_contiguous()

    def apply(self, grads):
        import ember_tensor
        grad = grads[0]
        if self.base_contiguous:
            result = grad.clone()
        else:
            result = ember_tensor.empty_strided(tuple(grad.shape), self.base_strides,
                                                dtype=grad.dtype, device=grad.device)
            result.copy_(grad)
        region = self.replay(result)
        fn = self.fn
        needs = self.needs_input_grad
        fn._needs = (True,) + tuple(needs[1:])
        res = fn.apply([region.clone()])
        fn._needs = None
        first = res[0] if res else None
        if first is None:
            region.zero_()
        else:
            region.copy_(validate_grad(first, fn._input_meta[0]) if fn._input_meta[0] else first)
        return [result] + list(res[1:])

    def _release(self):
        self.fn._release()


class RuleNode(Node):
    """A node made from a derivative rule (`_rules`); subclasses are named per op."""

    __slots__ = ()
    _rule = None

    def apply(self, grads):
        saved = self._unpack_saved()
        n = getattr(self, "_n_outputs", None)
        if n is None:
            grad = grads[0]
            if grad is None:
                return [None] * len(self._next)
        else:
            if all(g is None for g in grads):
                return [None] * len(self._next)
            grad = tuple(grads) + (None,) * (n - len(grads))
        result = self._rule.backward(self, grad, *saved)
        if len(self._next) == 1 and not isinstance(result, (tuple, list)):
            return [result]
        return list(result)
