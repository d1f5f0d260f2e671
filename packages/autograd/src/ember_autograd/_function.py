"""``autograd.Function``: ops defined in Python with a forward and a backward.

As in PyTorch, the node of a call is also its ``ctx``: ``ctx.save_for_backward`` stores
tensors (checked against in-place changes when unpacked), ``ctx.needs_input_grad`` says
which inputs want a gradient, ``mark_dirty`` / ``mark_non_differentiable`` /
``set_materialize_grads`` change how the outputs are recorded.
"""
import functools

from ember_tensor import Tensor

from . import _grad_mode
from ._graph import Node, SavedTensor, gradient_edge

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction",
           "NestedIOFunction"]


class FunctionCtx:
    """What ``forward`` and ``backward`` get as ``ctx``."""

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for ``backward``; read them back with ``saved_tensors``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._to_save_forward = tensors

    def mark_dirty(self, *tensors):
        """Declare inputs that ``forward`` modified in place (they are returned as outputs)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that never require grad (indices, masks)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        """Whether ``backward`` gets zeros (True, the default) or None for unused outputs."""
        self._materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of one call of a Function; named ``<Function>Backward``."""

    _forward_cls = None

    def __init__(self):
        Node.__init__(self)
        self._to_save = None
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True
        self._tensor_positions = ()
        self._n_outputs = 1
        self._output_meta = ()

    @property
    def saved_tensors(self):
        return self._unpack_saved()

    # A Function's ctx answers needs_input_grad per forward argument, fixed at forward time
    # (the Node property answers per edge, for the engine).
    @property
    def needs_input_grad(self):
        return self.__dict__.get("_forward_needs", ())

    @needs_input_grad.setter
    def needs_input_grad(self, value):
        self._forward_needs = value

    saved_variables = saved_tensors

    def apply(self, grads):
        n = self._n_outputs
        grads = list(grads) + [None] * (n - len(grads))
        if self._materialize_grads:
            import ember_tensor
            grads = [g if g is not None else ember_tensor.zeros(shape, dtype=dtype, device=device)
                     for g, (shape, dtype, device) in zip(grads, self._output_meta)]
        backward = self._forward_cls.backward
        if backward is Function.backward and type(self._forward_cls).vjp is not Function.vjp:
            backward = self._forward_cls.vjp
        result = backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = self._n_args
        if len(result) != n_args:
            if len(result) > n_args and all(r is None for r in result[n_args:]):
                result = result[:n_args]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n_args}, got {len(result)})")
        return [result[i] for i in self._tensor_positions]

    def _release(self):
        Node._release(self)


class FunctionMeta(type):
    """Gives every Function subclass its node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom differentiable ops: static ``forward(ctx, ...)`` and
    ``backward(ctx, *grad_outputs)``, called through ``apply``.

    >>> import ember_tensor as torch
    >>> class Double(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         return grad * 2
    >>> x = torch.ones(2, requires_grad=True)
    >>> Double.apply(x).sum().backward()
    >>> x.grad
    tensor([2., 2.])
    """

    def __init__(self, *args, **kwargs):
        import warnings
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all "
                      "static, so you should invoke them on the class itself.", DeprecationWarning)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
            "autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function "
            "to use it with backward mode AD.")

    @staticmethod
    def vjp(ctx, *grad_outputs):
        raise NotImplementedError("vjp is not implemented")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function "
                                  "to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        ctx = cls._backward_cls()
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        recording = _grad_mode.state.enabled and any(args[i]._requires_grad for i in positions)
        ctx._n_args = len(args)
        ctx._tensor_positions = positions
        ctx._needs = tuple(isinstance(a, Tensor) and a._requires_grad and recording for a in args)
        # needs_input_grad is per forward argument, as in PyTorch.
        ctx.needs_input_grad = ctx._needs
        uses_setup = cls.setup_context is not Function.setup_context
        prev = _grad_mode.state.enabled
        _grad_mode.state.enabled = False
        try:
            if uses_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            _grad_mode.state.enabled = prev
        ctx._needs = None
        if not recording:
            return outputs
        return _record_function(ctx, args, positions, outputs)


def _record_function(ctx, args, positions, outputs):
    from ._recording import _check_inplace_target, _view_base, _rebase
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    edges, metas = [], []
    for i in positions:
        t = args[i]
        if t._requires_grad:
            edges.append(gradient_edge(t))
            metas.append((t._data.shape, t._dtype))
        else:
            edges.append(None)
            metas.append(None)
    ctx._next = tuple(edges)
    ctx._input_meta = tuple(metas)
    ctx._n_outputs = len(outs)
    ctx._output_meta = tuple((tuple(o.shape), o.dtype, o.device) if isinstance(o, Tensor) else ((), None, None)
                             for o in outs)
    dirty = {id(t) for t in ctx._dirty}
    non_diff = {id(t) for t in ctx._non_differentiable}
    input_ids = {id(args[i]) for i in positions}
    results = []
    for nr, o in enumerate(outs):
        if not isinstance(o, Tensor):
            results.append(o)
            continue
        if id(o) in dirty:
            _check_inplace_target(o)
            if _view_base(o) is not None:
                raise RuntimeError("mark_dirty on a view is not supported by ember's autograd.Function")
            _rebase(o, ctx)
            o._output_nr = nr
        elif id(o) in non_diff:
            pass
        else:
            if id(o) in input_ids:
                o = o.detach()  # an input returned as it is: the output is an alias of it
            if o._dtype.is_floating_point or o._dtype.is_complex:
                o._grad_fn = ctx
                o._requires_grad = True
                o._output_nr = nr
        results.append(o)
    if ctx._to_save is not None:
        packed = []
        outs_by_id = {id(o): o for o in results if isinstance(o, Tensor)}
        for t in ctx._to_save:
            if t is None:
                packed.append(None)
            elif id(t) in outs_by_id and t._grad_fn is ctx:
                packed.append(SavedTensor(t, is_output=True))
            else:
                packed.append(SavedTensor(t))
        ctx._saved = packed
        ctx._to_save = None
    return results[0] if single else tuple(results)


class _DelayedError(Node):
    """The node of gradients computed by a once_differentiable backward: differentiating
    them again is an error."""

    def __init__(self, message, n):
        super().__init__()
        self.message = message

    def apply(self, grads):
        raise RuntimeError(self.message)


def once_differentiable(backward):
    """Run a Function's backward with grad mode off; differentiating its result again raises."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with _grad_mode.no_grad():
            outputs = backward(ctx, *grads)
        if not _grad_mode.state.enabled:
            return outputs
        wanted = [g for g in grads if isinstance(g, Tensor) and g._requires_grad]
        if not wanted:
            return outputs
        error = _DelayedError("trying to differentiate twice a function that was marked with "
                              "@once_differentiable", len(wanted))
        error._next = tuple(gradient_edge(g) for g in wanted)
        error._input_meta = tuple((g._data.shape, g._dtype) for g in wanted)
        single = not isinstance(outputs, tuple)
        marked = []
        for o in ((outputs,) if single else outputs):
            if isinstance(o, Tensor) and (o._dtype.is_floating_point or o._dtype.is_complex):
                o = o.detach()
                o._grad_fn = error
                o._requires_grad = True
            marked.append(o)
        return marked[0] if single else tuple(marked)
    return wrapper


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (PyTorch's legacy helper)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """Not supported: PyTorch's legacy nested-input Function."""
