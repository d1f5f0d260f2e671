"""Proxy: the stand-in value that records what a program does to it (``torch.fx.proxy``).

During symbolic tracing the program runs on Proxies instead of tensors. Python's
operators (``x + y``, ``x[0]``, ``-x``) record ``call_function`` nodes of the
``operator`` module, attribute reads record ``getattr`` and method calls record
``call_method``; ember ops and ``torch.nn.functional`` calls that receive a Proxy are
recorded by the tracer (see ``_symbolic_trace``). What a Proxy cannot do is answer a
question about its value: ``if proxy:``, ``for v in proxy:`` and ``len(proxy)`` raise,
as PyTorch's do.
"""
import dis
import inspect
import operator
from bisect import bisect_left

from ember_tensor import device, dtype, layout, memory_format

from .node import Node

__all__ = ["TraceError", "TracerBase", "GraphAppendingTracer", "Proxy", "Attribute"]


class TraceError(ValueError):
    """A traced program asked for the value of a Proxy (data-dependent control flow)."""


# Values that may stand in a node's arguments as they are.
_BASE_TYPES = (str, int, float, bool, complex, type(None), type(Ellipsis), dtype, device, memory_format, layout, range)


class TracerBase:
    """What a Proxy needs from a tracer: make nodes, and turn values into arguments."""

    graph = None
    # Whether ``assert proxy_condition`` records an assertion instead of raising.
    trace_asserts = False

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Add a node to ``self.graph`` (a hook for tracers that annotate nodes)."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        """The Proxy wrapping a new node (a hook for tracers with their own Proxy class)."""
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """Record a node from arguments that may hold Proxies, and return its Proxy."""
        node = self.create_node(kind, target, self.create_arg(args), self.create_arg(kwargs), name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """The graph form of a value: Proxies become their nodes, containers are rebuilt,
        plain constants stay; anything else is refused."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*(self.create_arg(elem) for elem in a))
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(elem) for elem in a)
        if isinstance(a, dict):
            result = {}
            for key, value in a.items():
                if not isinstance(key, str):
                    raise NotImplementedError(f"Keys in dict arguments must be strings, got {type(key)}")
                result[key] = self.create_arg(value)
            return result
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, _BASE_TYPES):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        """Called on ``bool(proxy)``: the value is unknown while tracing."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        """Called on ``iter(proxy)``: the length is unknown while tracing."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a "
                         "loop or as a *args or **kwargs function argument. See the torch.fx docs on "
                         "pytorch.org for a more detailed explanation of what types of control flow can be "
                         "traced, and check out the Proxy docstring for help troubleshooting Proxy iteration "
                         "errors")

    def keys(self, obj):
        """Called on ``proxy.keys()`` (``**proxy``): records the method call."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy built around a bare node: it appends to the node's graph."""

    def __init__(self, graph):
        self.graph = graph
        self.root = None


class Proxy:
    """A Node seen as a value: operations on it add nodes to its tracer's graph.

    ``Proxy(node)`` around a node of a graph being edited lets a transform write
    ``(Proxy(a) + Proxy(b)).node`` instead of creating the nodes by hand.

    >>> from ember_fx import Graph
    >>> g = Graph()
    >>> x = Proxy(g.placeholder("x"))
    >>> y = (x * 2).relu()
    >>> [n.format_node() for n in g.nodes][1:]
    ['%mul : [num_users=1] = call_function[target=operator.mul](args = (%x, 2), kwargs = {})', \
'%relu : [num_users=0] = call_method[target=relu](args = (%mul,), kwargs = {})']
    """

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        # Not a node yet: ``x.view(...)`` becomes one call_method node, not getattr + call.
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, state):
        self.__dict__ = state

    def __deepcopy__(self, memo):
        # Without it, deepcopy would find __deepcopy__ through __getattr__ (an Attribute).
        return Proxy(self.node, self.tracer)

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self):
        # ``a, b = proxy`` is allowed: the unpacking says how many items to take.
        caller = inspect.currentframe().f_back
        instructions = list(dis.get_instructions(caller.f_code))
        index = bisect_left([inst.offset for inst in instructions], caller.f_lasti)
        inst = instructions[index] if index < len(instructions) else None
        if inst is not None and inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        """``proxy.keys()``: what ``**proxy`` calls."""
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    # A Proxy is a dict key (tracers keep caches of them) although ``==`` records a node.
    __hash__ = object.__hash__


class Attribute(Proxy):
    """``proxy.name`` before we know whether it is read (a getattr node) or called (a
    call_method node); the getattr node is made only when needed."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


def _binary(target):
    def forward(self, other):
        return self.tracer.create_proxy("call_function", target, (self, other), {})

    def reflected(self, other):
        return self.tracer.create_proxy("call_function", target, (other, self), {})

    return forward, reflected


def _unary(target):
    def method(self):
        return self.tracer.create_proxy("call_function", target, (self,), {})

    return method


for _name in ("add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift", "and", "or", "xor",
              "matmul"):
    _target = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    _forward, _reflected = _binary(_target)
    setattr(Proxy, f"__{_name}__", _forward)
    setattr(Proxy, f"__r{_name}__", _reflected)
for _name in ("eq", "ne", "lt", "gt", "le", "ge", "getitem"):
    setattr(Proxy, f"__{_name}__", _binary(getattr(operator, _name))[0])
for _name in ("neg", "pos", "invert"):
    setattr(Proxy, f"__{_name}__", _unary(getattr(operator, _name)))
Proxy.__hash__ = object.__hash__  # defining __eq__ above would otherwise leave a Proxy unhashable


def find_tracer(args, kwargs):
    """The tracer of the first Proxy among `args` and `kwargs` (nested), or None.

    Called on every op while a trace runs, so it walks without rebuilding anything.
    """
    stack = [args, kwargs]
    while stack:
        value = stack.pop()
        if isinstance(value, Proxy):
            return value.tracer
        if isinstance(value, (tuple, list)):
            stack.extend(reversed(value))
        elif isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
        elif isinstance(value, slice):
            stack.extend((value.step, value.stop, value.start))
    return None

