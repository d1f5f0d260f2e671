"""How calls reach the tracer while a program runs on Proxies.

PyTorch routes ``torch.relu(proxy)`` through ``__torch_function__``, a check that every
op of its C++ core makes on every call. ember needs no such check: every ember op is an
``Operator`` of ember-tensor's dispatcher, and the dispatcher composes wrappers around all
ops at once. The tracer registers one wrapper *only while it traces*, which records a
``call_function`` node when an argument is a Proxy and otherwise runs the op; outside a
trace nothing is registered, so an op on tensors costs exactly what it cost before.

Python functions that are not ops (``torch.nn.functional.relu``, ``ember.hstack``,
``math.sqrt``, what ``fx.wrap`` names) are wrapped the way PyTorch's ``wrap`` and
``autowrap_modules`` do it: for the duration of the trace, the module attributes and the
globals of the traced code that name them are replaced by a wrapper that records the call
when a Proxy is among its arguments. ``Patcher`` undoes every replacement on exit.
"""
import functools
import types

from ember_tensor import dispatch

from .proxy import find_tracer

__all__ = ["Patcher", "record_if_proxy"]


def _route_proxies(op, args, kwargs, redispatch):
    """The dispatcher wrapper active during tracing: an op given a Proxy becomes a node."""
    tracer = find_tracer(args, kwargs)
    if tracer is None:
        return redispatch(op, args, kwargs)
    return tracer.create_proxy("call_function", op, args, kwargs)


_routing_depth = [0]  # traces in progress (a tracer may trace inside a trace)


def record_if_proxy(fn):
    """A wrapper of `fn` that records a ``call_function`` of `fn` when given a Proxy."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        tracer = find_tracer(args, kwargs)
        if tracer is None:
            return fn(*args, **kwargs)
        return tracer.create_proxy("call_function", fn, args, kwargs)

    wrapper.__fx_original__ = fn
    return wrapper


class Patcher:
    """Temporary replacements of attributes and dict entries, undone in reverse on exit."""

    def __init__(self):
        self._undo = []
        self._visited = set()
        self._wrappable = {}  # id(function) -> function to record when given a Proxy

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        while self._undo:
            self._undo.pop()()
        return False

    def route_ops(self):
        """Register the dispatcher wrapper (once, however deep traces nest)."""
        if _routing_depth[0] == 0:
            dispatch.register_wrapper(_route_proxies, outermost=True)
        _routing_depth[0] += 1

        def undo():
            _routing_depth[0] -= 1
            if _routing_depth[0] == 0:
                dispatch.unregister_wrapper(_route_proxies)

        self._undo.append(undo)

    def patch_method(self, cls, name, new):
        """Set ``cls.name = new``; restore (or remove) it on exit."""
        own = name in cls.__dict__
        original = cls.__dict__.get(name)
        setattr(cls, name, new)
        self._undo.append(lambda: setattr(cls, name, original) if own else delattr(cls, name))

    def patch_item(self, table, key, new):
        """Set ``table[key] = new``; restore (or delete) the entry on exit."""
        missing = key not in table
        original = table.get(key)

        def undo():
            if missing:
                table.pop(key, None)
            else:
                table[key] = original

        table[key] = new
        self._undo.append(undo)

    def add_wrappable(self, functions):
        """Functions to record as ``call_function`` when they receive a Proxy."""
        for fn in functions:
            self._wrappable[id(fn)] = fn

    def wrap_in(self, namespace, follow_modules=False):
        """Replace, in dict `namespace` (a module's or a function's globals), every entry
        naming a wrappable function; with `follow_modules`, do it too inside the ember
        modules it names (``import ember as torch`` -> ``torch.hstack``)."""
        if id(namespace) in self._visited:
            return
        self._visited.add(id(namespace))
        for key, value in list(namespace.items()):
            if id(value) in self._wrappable and self._wrappable[id(value)] is value:
                self.patch_item(namespace, key, record_if_proxy(value))
            elif (follow_modules and isinstance(value, types.ModuleType)
                  and value.__name__.partition(".")[0].startswith("ember")):
                self.wrap_in(vars(value))
