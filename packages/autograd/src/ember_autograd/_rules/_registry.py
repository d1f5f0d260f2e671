"""The derivative table: one entry per op name of ember_tensor.

An entry is one of:

* a `Rule`: the op's backward formula, written with differentiable ember ops (so the
  formula can itself be differentiated);
* `COMPOSITE`: the op is made of other ops and is differentiated through them (PyTorch's
  CompositeImplicitAutograd: ``flatten`` records the ``view`` it calls);
* `NOT_DIFFERENTIABLE`: outputs never require grad (comparisons, argmax, bit ops, ...).

A rule names the op's differentiable inputs (parameter names of the op; ``*name`` for a
list of tensors), what to save at forward time, and the backward formula::

    @derivative("mul", "mul_", inputs=("input", "other"),
                save=lambda input, other: (input, other))
    def mul(ctx, grad, input, other):
        return grad * other, grad * input

`save` is called with the op's arguments before the op runs and returns the values the
formula needs after ``grad`` (or None: nothing saved, the formula's defaults apply); tensors among them are checked against in-place changes
when unpacked. ``RESULT`` stands for the op's output. A formula returns one gradient per
input (None where there is none or ``ctx.needs_input_grad`` says it is not wanted);
gradients of broadcast inputs need no summing here: the engine fits every gradient to its
input's shape and dtype in one place (`_graph.validate_grad`).

``ctx`` is the node: ``ctx.needs_input_grad[i]`` says whether input i wants a gradient.
With several outputs, ``grad`` is a tuple (None for outputs that got no gradient). `name`
may be a function of the op's arguments (``SumBackward0`` vs ``SumBackward1``).

Adding a family (the API above is stable): write ``_rules/<family>.py`` with `derivative`,
`composite` and `not_differentiable` calls, and add one import line for it in
``_rules/__init__.py``. ``tests/test_rules_table.py`` fails while an op that ember_tensor
registers has no entry, or has two. An in-place op that reads its input before writing it
needs a rule (its output saved through ``RESULT`` or its input through ``save``, which the
recorder copies first); as a composite, the copy back would invalidate what the inner op
saved.
"""
import inspect

__all__ = ["Rule", "derivative", "composite", "not_differentiable", "TABLE", "RESULT",
           "COMPOSITE", "NOT_DIFFERENTIABLE"]

TABLE = {}


class _Marker:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


COMPOSITE = _Marker("COMPOSITE")
NOT_DIFFERENTIABLE = _Marker("NOT_DIFFERENTIABLE")


class _Result:
    """Stands for the op's output in a `save` tuple (``RESULT[i]``: output i of a tuple)."""

    __slots__ = ("index",)

    def __init__(self, index=None):
        self.index = index

    def __getitem__(self, index):
        return _Result(index)

    def __repr__(self):
        return "RESULT" if self.index is None else f"RESULT[{self.index}]"


RESULT = _Result()


def _camel(op_name):
    return "".join(part.capitalize() for part in op_name.strip("_").split("_"))


class Rule:
    """The derivative of one or more ops (an op and its in-place variant share one)."""

    def __init__(self, names, backward, inputs, save, node_name):
        self.names = names
        self.backward = backward
        self.inputs = inputs
        self.save = save
        self.node_name = node_name if node_name is not None else _camel(names[0]) + "Backward0"
        self._node_classes = {}
        self._fixed_class = None  # the node class when node_name is a plain string
        self._extractors = {}

    def node_class(self, name):
        cls = self._node_classes.get(name)
        if cls is None:
            from .._recording import RuleNode
            cls = self._node_classes[name] = type(name, (RuleNode,), {"__slots__": (), "_rule": self})
        return cls

    def make_node(self, args, kwargs):
        name = self.node_name
        if name.__class__ is str:
            cls = self._fixed_class
            if cls is None:
                cls = self._fixed_class = self.node_class(name)
            return cls()
        return self.node_class(name(*args, **kwargs))()

    def extractor(self, op):
        """A function (args, kwargs) -> list of the op's differentiable inputs."""
        extract = self._extractors.get(op)
        if extract is None:
            extract = self._extractors[op] = _make_extractor(op.impl, self.inputs)
        return extract


_SELF_NAMES = ("input", "self")


def _make_extractor(impl, inputs):
    params = list(inspect.signature(impl).parameters.values())
    positions = []
    for spec in inputs:
        is_list = spec.startswith("*")
        name = spec.lstrip("*")
        index = next((i for i, p in enumerate(params) if p.name == name), None)
        if index is None and name in _SELF_NAMES:
            # In-place variants call their first argument `self`, the others `input`.
            index = next((i for i, p in enumerate(params) if p.name in _SELF_NAMES), None)
            name = params[index].name if index is not None else name
        if index is None:
            raise TypeError(f"derivative rule names input {name!r}, which {impl.__name__}() does not take")
        p = params[index]
        positional = p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        default = None if p.default is p.empty else p.default
        positions.append((index if positional else None, name, default, is_list))

    if len(positions) <= 2 and all(index is not None and not is_list for index, _, _, is_list in positions):
        return _positional_extractor(positions)

    def extract(args, kwargs):
        found = []
        n = len(args)
        for index, name, default, is_list in positions:
            if index is not None and index < n:
                value = args[index]
            else:
                value = kwargs.get(name, default)
            if is_list:
                found.extend(value)
            else:
                found.append(value)
        return found
    return extract


def _positional_extractor(positions):
    """Unrolled extractors for one or two positional inputs: the common case, on every call."""
    (i0, name0, default0, _) = positions[0]
    if len(positions) == 1:
        def extract_one(args, kwargs):
            return [args[i0] if i0 < len(args) else kwargs.get(name0, default0)]
        return extract_one
    (i1, name1, default1, _) = positions[1]

    def extract_two(args, kwargs):
        n = len(args)
        return [args[i0] if i0 < n else kwargs.get(name0, default0),
                args[i1] if i1 < n else kwargs.get(name1, default1)]
    return extract_two


def derivative(*op_names, inputs=("input",), save=None, name=None):
    """Register the decorated backward formula for `op_names` (see the module docstring).

    Args:
        op_names: the ops it differentiates (e.g. ``"exp", "exp_"``).
        inputs: the op's differentiable parameters, in the order the formula returns
            their gradients.
        save: ``save(*args, **kwargs) -> tuple`` of what the formula needs.
        name: the node's class name (default: ``<Op>Backward0``), or a function of the
            op's arguments returning it.
    """
    def register(backward):
        rule = Rule(op_names, backward, tuple(inputs), save, name)
        for op_name in op_names:
            _register(op_name, rule)
        return backward
    return register


def composite(*op_names):
    """Mark ops differentiated through the ops they are made of."""
    for op_name in op_names:
        _register(op_name, COMPOSITE)


def not_differentiable(*op_names):
    """Mark ops whose outputs never require grad."""
    for op_name in op_names:
        _register(op_name, NOT_DIFFERENTIABLE)


def _register(op_name, entry):
    if op_name in TABLE:
        raise RuntimeError(f"op {op_name!r} has two entries in the derivative table")
    TABLE[op_name] = entry
