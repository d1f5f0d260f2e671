"""The recorded graph: nodes (``grad_fn``), saved tensors, leaf accumulators, edges.

A node's ``_next`` holds one edge per differentiable input: ``(node, output_nr)`` or
``(None, 0)`` where no gradient flows. ``_input_meta`` holds ``(shape, dtype)`` per edge,
and `validate_grad` makes every gradient fit it: this is the one place where gradients of
broadcast inputs are summed back to the input's shape (`sum_to_size`) and cast back to
the input's dtype.
"""
import itertools
import re
import sys
import weakref
from collections import OrderedDict

from ember_tensor import Tensor

from . import _grad_mode, _saved_hooks
from .hooks import add_hook

__all__ = ["Node", "AccumulateGrad", "SavedTensor", "sum_to_size"]

_sequence = itertools.count()
_FREED = object()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class Node:
    """A function of the backward graph (PyTorch's ``torch.autograd.graph.Node``).

    ``next_functions`` are the nodes the gradients of this node's inputs flow to; calling
    a node (``node(*grads)``) applies it outside of the engine.
    """

    # Only what every node needs is set per instance; hooks, retain_grad, metadata and
    # anomaly traces are rare and fall back to these class-level Nones (a node is made on
    # every recorded op call, so its constructor is on the hot path).
    __slots__ = ("_next", "_input_meta", "_saved", "_seq", "__weakref__", "__dict__")
    _needs = None
    _pre_hooks = None
    _post_hooks = None
    _tensor_pre_hooks = None
    _retains_grad = None
    _metadata = None
    _anomaly_trace = None

    def __init__(self):
        self._next = ()
        self._input_meta = ()
        self._saved = None
        self._seq = next(_sequence)

    # -- PyTorch's Node API ---------------------------------------------------------------

    def name(self):
        """The node's class name, e.g. ``'MulBackward0'``."""
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple(edge if edge is not None else (None, 0) for edge in self._next)

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def needs_input_grad(self):
        if self._needs is not None:
            return self._needs
        return tuple(e is not None and e[0] is not None for e in self._next)

    def should_compute_output(self, i):
        return self.needs_input_grad[i]

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after the node; a non-None return replaces grad_inputs."""
        if self._post_hooks is None:
            self._post_hooks = OrderedDict()  # handles refer to hook tables weakly
        return add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node; a non-None return replaces grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = OrderedDict()
        return add_hook(self._pre_hooks, fn)

    def __call__(self, *grads):
        return self.apply(list(grads))

    def apply(self, grads):
        """Gradients for the inputs (one per edge of ``_next``) from those of the outputs."""
        raise NotImplementedError

    def _release(self):
        """Free saved tensors after a backward pass that does not retain the graph."""
        saved = self._saved
        if saved is not None and saved is not _FREED and any(s.__class__ is SavedTensor for s in saved):
            self._saved = _FREED

    def _unpack_saved(self):
        saved = self._saved
        if saved is _FREED:
            raise RuntimeError(FREED_MESSAGE)
        if not saved:
            return ()
        return tuple(s.unpack(self) if s.__class__ is SavedTensor else s for s in saved)

    def _tensor_hooks_for(self, output_nr):
        hooks = self._tensor_pre_hooks
        return () if hooks is None else hooks.get(output_nr, ())

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into ``variable.grad``.

    The leaf holds its accumulator (so it is made once per leaf, not once per recorded
    op) and the accumulator holds the leaf weakly, so the two make no reference cycle; a
    gradient arriving for a leaf nobody holds any more is dropped.
    """

    __slots__ = ("_variable_ref",)

    def __init__(self, variable):
        super().__init__()
        self._variable_ref = weakref.ref(variable)
        self._input_meta = ((variable._data.shape, variable._dtype),)

    @property
    def variable(self):
        return self._variable_ref()

    def name(self):
        return "torch::autograd::AccumulateGrad"

    def apply(self, grads):
        variable = self._variable_ref()
        if variable is not None:
            accumulate_grad(variable, grads[0])
        return []


# References to a fresh gradient that `accumulate_grad` sees when nothing else holds it:
# the caller's variable, the argument, getrefcount's own argument.
_OWNED_REFS = 3


def accumulate_grad(variable, grad):
    """Add `grad` into ``variable.grad``, as PyTorch's AccumulateGrad does.

    A gradient that nothing else references is stored as it is; one that is shared (a
    pass-through of add, the user's ``gradient=``) is copied so that ``.grad`` tensors
    never alias each other.
    """
    old = variable._grad
    if old is None:
        if _grad_mode.state.enabled:
            variable._grad = grad
        elif sys.getrefcount(grad) > _OWNED_REFS or not grad.is_contiguous() or grad._grad_fn is not None:
            variable._grad = _detached(grad).clone()
        else:
            variable._grad = grad
    elif _grad_mode.state.enabled or grad.is_sparse != old.is_sparse:
        # Sparse into dense (or dense into sparse) makes a dense .grad, as in PyTorch.
        variable._grad = grad + old if old.is_sparse else old + grad
    else:
        old.add_(grad)
    meta = variable._autograd_meta
    if meta is not None and meta.post_acc_hooks:
        for hook in tuple(meta.post_acc_hooks.values()):
            hook(variable)


def _detached(t):
    if t._grad_fn is None and not t._requires_grad:
        return t
    return t.detach()


class SavedTensor:
    """A tensor saved for backward, with the version of its storage at save time.

    An output of the node that saves it is kept as its fields, not as the tensor (the
    tensor holds the node as grad_fn: keeping it would make a reference cycle); the tensor
    is rebuilt from them when backward unpacks it.

    Under ``saved_tensors_hooks`` the innermost pair's pack hook gets the tensor and only
    what it returns is kept; backward hands that to the unpack hook. As in PyTorch, what
    a pack hook keeps is its own business: no in-place version check is made on it.
    """

    __slots__ = ("tensor", "fields", "version", "is_output", "output_nr", "packed", "unpack_hook")

    def __init__(self, tensor, is_output=False):
        self.is_output = is_output
        self.output_nr = tensor._output_nr if is_output else 0
        hooks = _saved_hooks.current_stack()
        if hooks:
            pack_hook, self.unpack_hook = hooks[-1]
            self.tensor = self.fields = self.version = None
            # As PyTorch: the hook runs without recording (its own ops save nothing).
            state = _grad_mode.state
            enabled, state.enabled = state.enabled, False
            try:
                self.packed = pack_hook(tensor)
            finally:
                state.enabled = enabled
            return
        self.unpack_hook = self.packed = None
        if is_output:
            self.tensor = None
            self.fields = (tensor._data, tensor._dtype, tensor._device, tensor._storage, tensor._offset)
        else:
            self.tensor = tensor
        self.version = tensor._storage.version

    def _value(self):
        return self.tensor if self.tensor is not None else Tensor._wrap(*self.fields)

    def unpack(self, node):
        if self.unpack_hook is not None:
            t = self.unpack_hook(self.packed)
            if not isinstance(t, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                                f"type {type(t).__name__}")
            if self.is_output and _grad_mode.state.enabled:
                t = t.detach()  # a fresh alias takes the node as its history, not the hook's tensor
        else:
            t = self._value()
            if t._storage.version != self.version:
                raise RuntimeError(self._modified_message(node))
        if self.is_output and _grad_mode.state.enabled:
            # Double backward: the saved output is the output of `node` again.
            t._grad_fn = node
            t._requires_grad = True
            t._output_nr = self.output_nr
        return t

    def _modified_message(self, node):
        t = self._value()
        grad_fn = node if self.is_output else t._grad_fn
        where = ""
        if grad_fn is not None:
            output_nr = self.output_nr if self.is_output else t._output_nr
            where = f", which is output {output_nr} of {short_name(grad_fn)},"
        from . import anomaly_mode
        hint = (" Hint: the backtrace further above shows the operation that failed to compute its "
                "gradient. The variable in question was changed in there or anywhere later. Good luck!"
                if anomaly_mode.is_anomaly_enabled() else
                " Hint: enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        return ("one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{t.type()} {list(t.shape)}]{where} is at version "
                f"{t._storage.version}; expected version {self.version} instead.{hint}")


def short_name(node):
    """'AddBackward0' -> 'Add', as PyTorch names nodes in its error messages."""
    return re.sub(r"Backward\d*$", "", node.name())


class AutogradMeta:
    """What autograd keeps on a tensor beyond its flags (the ``_autograd_meta`` slot)."""

    __slots__ = ("grad_accumulator", "hooks", "post_acc_hooks", "retains_grad", "view_base",
                 "view_replay", "view_version", "multi_view_of", "__weakref__")

    def __init__(self):
        self.grad_accumulator = None
        self.hooks = None
        self.post_acc_hooks = None
        self.retains_grad = False
        self.view_base = None
        self.view_replay = None
        self.view_version = 0
        self.multi_view_of = None


def meta_of(t):
    """The tensor's AutogradMeta, created on first use."""
    meta = t._autograd_meta
    if meta is None:
        meta = t._autograd_meta = AutogradMeta()
    return meta


def grad_accumulator(t):
    """The one AccumulateGrad node of leaf `t`, made again if ``.data`` changed its shape or dtype."""
    meta = t._autograd_meta
    if meta is None:
        meta = t._autograd_meta = AutogradMeta()
    acc = meta.grad_accumulator
    if acc is None or acc._input_meta[0] != (t._data.shape, t._dtype):
        acc = meta.grad_accumulator = AccumulateGrad(t)
    return acc


def gradient_edge(t):
    """Where the gradient of `t` flows: (grad_fn, output_nr), the leaf's accumulator, or None."""
    meta = t._autograd_meta
    if meta is not None and meta.view_base is not None and meta.view_version != t._storage.version:
        refresh_view(t, meta)
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        # The leaf's accumulator, inline when it exists and still fits (the common case).
        acc = meta.grad_accumulator if meta is not None else None
        if acc is None or acc._input_meta[0] != (t._data.shape, t._dtype):
            acc = grad_accumulator(t)
        return (acc, 0)
    return None


def refresh_view(view, meta):
    """Re-derive a view's grad_fn from its base after an in-place change to their memory.

    The view's recorded chain of view ops is replayed on the base (PyTorch's view replay),
    so the view's gradient flows through whatever the base's history is now.
    """
    with _grad_mode.enable_grad():
        fresh = meta.view_replay(meta.view_base)
    view._grad_fn = fresh._grad_fn
    view._output_nr = fresh._output_nr
    view._requires_grad = fresh._requires_grad
    meta.view_version = view._storage.version


def sum_to_size(grad, shape):
    """Sum `grad` over the dims that were broadcast to turn `shape` into grad's shape.

    >>> import ember_tensor as torch
    >>> sum_to_size(torch.ones(2, 3), (3,))
    tensor([2., 2., 2.])
    """
    gshape = tuple(grad._data.shape)
    lead = len(gshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"size {list(shape)} is not expandable to size {list(gshape)}")
    dims = list(range(lead))
    for i, n in enumerate(shape):
        g = gshape[lead + i]
        if n != g:
            if n != 1:
                raise RuntimeError(
                    f"Mismatch in shape: grad has a shape of {list(gshape)} which cannot be summed "
                    f"to the input's shape {list(shape)}")
            dims.append(lead + i)
    if dims:
        grad = grad.sum(tuple(dims), keepdim=True)
    if lead:
        grad = grad.reshape(shape)
    return grad


def validate_grad(grad, meta):
    """Make `grad` fit an input of (shape, dtype) `meta`: unbroadcast, then cast."""
    shape, dtype = meta
    if grad._data.shape != shape:
        grad = sum_to_size(grad, shape)
    if grad._dtype is not dtype:
        if grad._dtype.is_complex and not dtype.is_complex:
            grad = grad.real  # a real input gets the real part, as PyTorch's validate_outputs
        grad = grad.to(dtype)
    return grad
