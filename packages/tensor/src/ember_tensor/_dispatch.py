"""The dispatcher: every public op is an `Operator`, and every call goes through here.

Layers above ember-tensor wrap *all* ops at once by registering a wrapper: autograd
records the graph through one, export traces through one, the profiler times through
one. A wrapper is called as ``wrapper(op, args, kwargs, redispatch)`` and must call
``redispatch(op, args, kwargs)`` to run the op below it (or return something else).
The chain is composed once at registration, so a call costs one Python call per
active wrapper and nothing when none is registered. Tensor methods (`method`) enter the
chain themselves, and the innermost wrapper is handed `call_impl`, which it may replace
by calling ``op.impl`` directly: a small op pays for no frame it does not need.

Device dispatch happens one level down: an op's implementation picks the kernels of
its inputs' device through `backend(device)`; no op above ember_tensor branches on the
device.
"""
import functools
from types import MethodType

__all__ = ["Operator", "register_wrapper", "unregister_wrapper", "operators", "call_impl", "method"]

_OPERATORS = {}
_wrappers = []


def call_impl(op, args, kwargs):
    """The innermost redispatch: run `op`'s implementation, no wrapper involved. A wrapper
    handed this as its redispatch may call ``op.impl(*args, **kwargs)`` itself instead,
    a frame less on every op call."""
    return op.impl(*args, **kwargs) if kwargs else op.impl(*args)


# The composed chain: the outermost wrapper (None when none is registered) and the
# redispatch it is handed. `Operator.__call__` calls the outermost wrapper itself, so a
# call with one wrapper (autograd's, the usual case) costs that wrapper's frame and the
# op's, nothing in between.
_outermost = None
_outermost_redispatch = call_impl


class Operator:
    """A named op with one device-generic implementation, called through the wrappers.

    Attributes:
        name: PyTorch's op name ("add", "add_", "sum", "view", ...).
        impl: the function computing the op with no wrapper involved.
        inplace: whether the op writes into its first argument.
        view: whether the op returns a view of its first argument.
        composite: whether the op computes only by calling other ops (PyTorch's
            CompositeImplicitAutograd): a tracer that cannot express the op itself (an ONNX
            export) may record the ops it is made of instead.
    """

    __slots__ = ("name", "impl", "inplace", "view", "composite", "__dict__")

    def __init__(self, name, impl, *, inplace=False, view=False, composite=False):
        self.name = name
        self.impl = impl
        self.inplace = inplace
        self.view = view
        self.composite = composite
        self.__doc__ = impl.__doc__
        self.__name__ = self.__qualname__ = name
        self.__module__ = "ember_tensor"
        self.__wrapped__ = impl

    def __call__(self, *args, **kwargs):
        if _outermost is None:
            return self.impl(*args, **kwargs)
        return _outermost(self, args, kwargs, _outermost_redispatch)

    def __get__(self, obj, objtype=None):
        # Lets an Operator stand directly as a Tensor method: x.add(y) == add(x, y).
        if obj is None:
            return self
        return MethodType(self, obj)

    def __repr__(self):
        return f"<ember op {self.name}>"

    def __reduce__(self):
        # An op pickles (and copies) by name, as a function does by its qualified name: a
        # pickled fx graph calling ``relu`` loads with the registered op itself.
        return (_operator_named, (self.name,))


def method(op, name=None, arity=None):
    """`op` as the Tensor method `name` (default: the op's name), self first: a plain
    function, which Python binds to the tensor in C, where an Operator found on the type
    binds through its Python `__get__` into a bound method on every call; it calls the
    wrappers (or the implementation) as `Operator.__call__` does, and pickles by its place
    on ``ember_tensor.Tensor``. `arity` (1, 2 or 3 arguments, self included) gives a method
    taking exactly that many, with no argument packing: the Python operators."""
    if arity == 1:
        def bound(self):
            if _outermost is None:
                return op.impl(self)
            return _outermost(op, (self,), {}, _outermost_redispatch)
    elif arity == 2:
        def bound(self, other):
            if _outermost is None:
                return op.impl(self, other)
            return _outermost(op, (self, other), {}, _outermost_redispatch)
    elif arity == 3:
        def bound(self, key, value):
            if _outermost is None:
                return op.impl(self, key, value)
            return _outermost(op, (self, key, value), {}, _outermost_redispatch)
    else:
        def bound(self, *args, **kwargs):
            if _outermost is None:
                return op.impl(self, *args, **kwargs)
            return _outermost(op, (self, *args), kwargs, _outermost_redispatch)
    bound.__name__ = name = name or op.name
    bound.__qualname__ = "Tensor." + name
    bound.__module__ = "ember_tensor"
    bound.__doc__ = op.__doc__
    bound.__wrapped__ = op
    return bound


def _operator_named(name):
    """The registered Operator called `name` (what a pickled Operator loads as)."""
    return _OPERATORS[name]


def op(name=None, *, inplace=False, view=False, composite=False):
    """Decorator: turn an implementation function into a registered `Operator` (see its
    attributes for the flags)."""
    def wrap(impl):
        o = Operator(name or impl.__name__, impl, inplace=inplace, view=view, composite=composite)
        if o.name in _OPERATORS:
            raise RuntimeError(f"operator {o.name!r} is registered twice")
        _OPERATORS[o.name] = o
        return o
    return wrap


def operators():
    """All registered operators by name (a copy)."""
    return dict(_OPERATORS)


def _rebuild_chain():
    global _outermost, _outermost_redispatch
    redispatch = call_impl
    for wrapper in reversed(_wrappers[1:]):
        redispatch = functools.partial(_call_wrapper, wrapper, redispatch)
    _outermost_redispatch = redispatch
    _outermost = _wrappers[0] if _wrappers else None


def _call_wrapper(wrapper, redispatch, op, args, kwargs):
    return wrapper(op, args, kwargs, redispatch)


def register_wrapper(wrapper, *, outermost=False):
    """Wrap every op call with `wrapper(op, args, kwargs, redispatch)`.

    Wrappers registered later run inside earlier ones unless `outermost` is set (the
    profiler, say, wants to time autograd's recording too).
    """
    if outermost:
        _wrappers.insert(0, wrapper)
    else:
        _wrappers.append(wrapper)
    _rebuild_chain()


def unregister_wrapper(wrapper):
    """Remove a wrapper registered with `register_wrapper`."""
    _wrappers.remove(wrapper)
    _rebuild_chain()


# How many traces (torch.jit.trace, ONNX export) are recording op calls now. Code above
# the dispatcher reads it through `is_tracing` to take the path a trace can record: ember-nn's
# recurrent layers run their composition of ops, not the fused layer op, while tracing.
_tracing = 0


def is_tracing():
    """Whether a trace is recording op calls (``torch.jit.is_tracing()``)."""
    return _tracing > 0


class tracing:
    """Context manager for the recorders: op calls inside are being traced."""

    def __enter__(self):
        global _tracing
        _tracing += 1
        return self

    def __exit__(self, *exc):
        global _tracing
        _tracing -= 1
        return False
