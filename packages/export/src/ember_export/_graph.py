"""The graph a trace records: values, nodes, and how to print and re-run them.

A `Value` is one tensor of the traced program: a graph input, a parameter (named after
its ``named_parameters()``/``named_buffers()`` key), a constant the program used that
came from neither, or a node's output. A `Node` is one call of an ember op with its
arguments as they were, tensors replaced by Values. Running the graph calls the same ops
again through ember's dispatcher, so autograd records the re-run as usual.
"""

__all__ = ["Value", "Node", "Graph"]


class Value:
    """One tensor of the graph, with the shape and dtype it had when traced."""

    __slots__ = ("name", "kind", "shape", "dtype", "tensor")

    def __init__(self, name, kind, shape, dtype, tensor=None):
        self.name = name
        self.kind = kind          # "input", "param", "const" or "node"
        self.shape = tuple(shape)
        self.dtype = dtype
        self.tensor = tensor      # the tensor of a param or const

    def __repr__(self):
        return f"%{self.name}"


class Node:
    """One op call: ``outputs = op(*args, **kwargs)`` with Values in place of tensors."""

    __slots__ = ("op", "args", "kwargs", "outputs", "source")

    def __init__(self, op, args, kwargs, outputs, source):
        self.op = op
        self.args = args
        self.kwargs = kwargs
        self.outputs = outputs    # a Value, or a tuple of Values (or None for non-tensors)
        self.source = source      # "file:line" of the user's code that called the op

    @property
    def kind(self):
        return self.op.name

    def output_values(self):
        outs = self.outputs if isinstance(self.outputs, tuple) else (self.outputs,)
        return [v for v in outs if isinstance(v, Value)]


def _format(arg):
    if isinstance(arg, Value):
        return repr(arg)
    if isinstance(arg, (list, tuple)):
        inner = ", ".join(_format(a) for a in arg)
        return f"[{inner}]" if isinstance(arg, list) else f"({inner}{',' if len(arg) == 1 else ''})"
    if isinstance(arg, slice):
        return f"{'' if arg.start is None else arg.start}:{'' if arg.stop is None else arg.stop}" + (
            "" if arg.step is None else f":{arg.step}")
    return repr(arg)


def _type_of(value):
    return f"{str(value.dtype).replace('torch.', '').capitalize()}({', '.join(map(str, value.shape))})"


class Graph:
    """Inputs, parameters, constants, nodes and outputs of one traced program."""

    def __init__(self):
        self.inputs = []
        self.params = []
        self.constants = []
        self.nodes = []
        self.outputs = None       # a Value or a (nested) tuple/list of Values
        self._count = 0

    def new_value(self, kind, tensor, name=None, keep=False):
        if name is None:
            name = str(self._count)
            self._count += 1
        value = Value(name, kind, tensor.shape, tensor.dtype, tensor if keep else None)
        {"input": self.inputs, "param": self.params, "const": self.constants}.get(kind, []).append(value)
        return value

    def __str__(self):
        lines = ["graph(" + ",\n      ".join(f"%{v.name} : {_type_of(v)}" for v in self.inputs + self.params) + "):"]
        for const in self.constants:
            lines.append(f"  %{const.name} : {_type_of(const)} = constant()")
        for node in self.nodes:
            outs = ", ".join(f"%{v.name} : {_type_of(v)}" for v in node.output_values()) or "()"
            args = [_format(a) for a in node.args] + [f"{k}={_format(v)}" for k, v in node.kwargs.items()]
            lines.append(f"  {outs} = {node.kind}({', '.join(args)})  # {node.source}")
        lines.append(f"  return ({_format(self.outputs)})")
        return "\n".join(lines)

    def run(self, inputs, bindings=None):
        """Execute the graph on ``inputs`` (tensors, in order); ``bindings`` overrides params by name."""
        env = {}
        for value, tensor in zip(self.inputs, inputs):
            env[id(value)] = tensor
        for value in self.params:
            env[id(value)] = (bindings or {}).get(value.name, value.tensor)
        for value in self.constants:
            env[id(value)] = value.tensor
        for node in self.nodes:
            args = _resolve(node.args, env)
            kwargs = {k: _resolve(v, env) for k, v in node.kwargs.items()}
            result = node.op(*args, **kwargs)
            _bind(node.outputs, result, env)
        return _resolve(self.outputs, env)


def _resolve(arg, env):
    if isinstance(arg, Value):
        return env[id(arg)]
    if isinstance(arg, list):
        return [_resolve(a, env) for a in arg]
    if isinstance(arg, tuple):
        return tuple(_resolve(a, env) for a in arg)
    return arg


def _bind(outputs, result, env):
    if isinstance(outputs, Value):
        env[id(outputs)] = result
    elif isinstance(outputs, tuple):
        for value, item in zip(outputs, result):
            _bind(value, item, env)
