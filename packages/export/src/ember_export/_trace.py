"""Tracing: run a function or module once and record every ember op it calls.

The tracer is a wrapper on ember_tensor's dispatcher (the same hook autograd uses). It
records only the outermost op calls: what an op does inside (``flatten`` calling
``view``) is that op's business and is re-done when the node runs again. Tensors the
program meets that are neither inputs nor op outputs become parameters (named after the
module's ``named_parameters()``/``named_buffers()``) or constants.

A trace is only as general as the run it recorded. As PyTorch does, it warns
(`TracerWarning`) when the program turns a traced tensor into a Python value (``item()``,
``bool()``, ``int()``, ``tolist()``, ``numpy()``): a branch or a size taken from it is
frozen into the graph.
"""
import contextlib
import os
import sys
import warnings

import ember_autograd
import ember_tensor
from ember_tensor import Tensor
from ember_tensor import dispatch as _dispatch

from ._graph import Graph, Node, Value

__all__ = ["trace", "TracedModule", "TracerWarning"]


class TracerWarning(UserWarning):
    """The trace may not generalise: it depended on a Python value computed from a tensor."""


def _in_ember(frame):
    name = frame.f_globals.get("__name__", "")
    return name == "ember" or name.startswith(("ember_", "ember."))


def _user_frame():
    """'file:line' of the innermost caller outside ember's packages (a model's forward)."""
    frame = sys._getframe(2)
    while frame is not None and _in_ember(frame):
        frame = frame.f_back
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}" if frame else "?"


class _Tracer:
    def __init__(self, named_tensors, expand=None):
        self.graph = Graph()
        self.values = {}          # id(tensor) -> Value
        self.alive = []           # keeps traced tensors alive so their ids stay unique
        self.named = {id(t): name for name, t in named_tensors}
        self.depth = 0
        self.expand = expand      # op -> bool: record a composite op's parts instead of it

    def value_of(self, tensor):
        value = self.values.get(id(tensor))
        if value is None:
            name = self.named.get(id(tensor))
            if name is not None:
                value = self.graph.new_value("param", tensor, name, keep=True)
            else:
                value = self.graph.new_value("const", tensor.detach().clone(), keep=True)
            self._remember(tensor, value)
        return value

    def _remember(self, tensor, value):
        self.values[id(tensor)] = value
        self.alive.append(tensor)

    def convert(self, arg):
        if isinstance(arg, Tensor):
            return self.value_of(arg)
        if isinstance(arg, list):
            return [self.convert(a) for a in arg]
        if isinstance(arg, tuple):
            return tuple(self.convert(a) for a in arg)
        return arg

    def outputs(self, result):
        if isinstance(result, Tensor):
            value = self.graph.new_value("node", result)
            self._remember(result, value)
            return value
        if isinstance(result, (tuple, list)):
            return tuple(self.outputs(r) for r in result)
        return None

    def __call__(self, op, args, kwargs, redispatch):
        if self.depth:
            return redispatch(op, args, kwargs)
        if op.composite and self.expand is not None and self.expand(op):
            return redispatch(op, args, kwargs)  # its parts come through here and are recorded
        # Inside, the op's own op calls and the tracer's bookkeeping (copying a constant)
        # are not recorded.
        self.depth += 1
        try:
            result = redispatch(op, args, kwargs)
            node = Node(op, self.convert(args), {k: self.convert(v) for k, v in kwargs.items()}, None,
                        _user_frame())
            if self._constant(node):
                # Its inputs are all constants: its result is one too (a mask, an averaging
                # matrix built in place); keep the value, not the op.
                node.outputs = self.constants(result)
                return result
            node.outputs = self.outputs(result)
        finally:
            self.depth -= 1
        self.graph.nodes.append(node)
        return result

    def _constant(self, node):
        values = [v for v in _values_in(list(node.args) + list(node.kwargs.values()))]
        return bool(values) and all(v.kind == "const" for v in values) and not node.op.name.startswith(_RANDOM)

    def constants(self, result):
        if isinstance(result, Tensor):
            value = self.graph.new_value("const", result.detach().clone(), keep=True)
            self._remember(result, value)
            return value
        if isinstance(result, (tuple, list)):
            return tuple(self.constants(r) for r in result)
        return None


# Ops of constants fold into constants, except random ones (each run must draw anew).
_RANDOM = ("rand", "randn", "randint", "randperm", "bernoulli", "multinomial", "normal", "poisson", "uniform_",
           "normal_", "random_", "exponential_", "cauchy_", "log_normal_", "geometric_")


def _values_in(items):
    for item in items:
        if isinstance(item, Value):
            yield item
        elif isinstance(item, (list, tuple)):
            yield from _values_in(item)


_CONVERSIONS = ("item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__")


@contextlib.contextmanager
def _warn_on_python_values(tracer):
    originals = {name: getattr(Tensor, name) for name in _CONVERSIONS if hasattr(Tensor, name)}

    def guarded(name, original):
        def method(self, *args, **kwargs):
            if id(self) in tracer.values and tracer.values[id(self)].kind in ("input", "node") and not tracer.depth:
                warnings.warn(f"Converting a tensor to a Python value ({name}) might cause the trace to be "
                              f"incorrect. We can't record the data flow of Python values, so this value will be "
                              f"treated as a constant in the future. This means that the trace might not "
                              f"generalize to other inputs!", TracerWarning, stacklevel=2)
            tracer.depth += 1  # bool() calls item(): one warning is enough
            try:
                return original(self, *args, **kwargs)
            finally:
                tracer.depth -= 1
        return method

    for name, original in originals.items():
        setattr(Tensor, name, guarded(name, original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(Tensor, name, original)


def _named_tensors(model):
    named = []
    for attr in ("named_parameters", "named_buffers"):
        if hasattr(model, attr):
            named.extend(getattr(model, attr)())
    return named


def _flatten_outputs(result, tracer):
    if isinstance(result, Tensor):
        return tracer.value_of(result)
    if isinstance(result, (list, tuple)):
        return tuple(_flatten_outputs(r, tracer) for r in result)
    raise RuntimeError(f"trace: the traced function must return tensors or tuples of tensors, got "
                       f"{type(result).__name__}")


def record(fn, example_inputs, named_tensors=(), expand=None):
    """The Graph of one run of ``fn(*example_inputs)`` (tensors only as inputs). A composite
    op (``Operator.composite``) for which ``expand(op)`` is true is recorded as the ops it
    calls, not as itself."""
    tracer = _Tracer(named_tensors, expand)
    for i, tensor in enumerate(example_inputs):
        if not isinstance(tensor, Tensor):
            raise TypeError(f"trace: example input {i} must be a Tensor, got {type(tensor).__name__}")
        tracer._remember(tensor, tracer.graph.new_value("input", tensor))
    _dispatch.register_wrapper(tracer, outermost=True)
    try:
        with _warn_on_python_values(tracer), ember_autograd.no_grad(), _dispatch.tracing():
            result = fn(*example_inputs)
    finally:
        _dispatch.unregister_wrapper(tracer)
    tracer.depth += 1  # an output that is a constant is copied without being recorded
    tracer.graph.outputs = _flatten_outputs(result, tracer)
    return tracer.graph


class TracedModule:
    """The result of `trace`: calls re-run the recorded ops (no Python control flow).

    Attributes:
        graph: the recorded Graph (``print(traced.graph)``).
    """

    def __init__(self, graph, original):
        self.graph = graph
        self._original = original

    def __call__(self, *inputs):
        if len(inputs) != len(self.graph.inputs):
            raise TypeError(f"the traced program takes {len(self.graph.inputs)} inputs, got {len(inputs)}")
        return self.graph.run(inputs)

    forward = __call__

    def named_parameters(self):
        return [(v.name, v.tensor) for v in self.graph.params]

    def parameters(self):
        return [v.tensor for v in self.graph.params]

    @property
    def code(self):
        return str(self.graph)

    def __repr__(self):
        return f"TracedModule(original={getattr(self._original, '__name__', type(self._original).__name__)})"


def trace(func, example_inputs, check_trace=True, strict=True):
    """Record ``func(*example_inputs)`` into a graph; return a callable that replays it.

    Args:
        func: a function or a module (anything callable; a module's parameters and
            buffers become named graph parameters).
        example_inputs: a tensor or a tuple of tensors.
        check_trace: replay the graph on the example inputs and check it gives the same
            outputs (as ``torch.jit.trace`` does).

    Returns:
        A `TracedModule`; its ``graph`` prints the recorded ops.
    """
    if isinstance(example_inputs, Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    graph = record(func, example_inputs, _named_tensors(func))
    traced = TracedModule(graph, func)
    if check_trace:
        with ember_autograd.no_grad():
            expected, replayed = func(*example_inputs), traced(*example_inputs)
        _check_same(expected, replayed)
    return traced


def _check_same(expected, replayed):
    if isinstance(expected, Tensor):
        if not ember_tensor.allclose(expected.detach(), replayed.detach(), rtol=1e-5, atol=1e-6, equal_nan=True):
            warnings.warn("Trace had nondeterministic nodes or depends on Python values: the traced graph's "
                          "output differs from the function's on the example inputs.", TracerWarning, stacklevel=3)
        return
    for e, r in zip(expected, replayed):
        _check_same(e, r)
