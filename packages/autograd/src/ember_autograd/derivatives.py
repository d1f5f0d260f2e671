"""The derivative table, declared for the layers above (ember-compile derives backward
plans ahead of time from it; there is no second table).

Declared surface (layers above import this module, never ``_rules`` or ``_graph``):
    entry_for(op)        the table's entry for a dispatcher `Operator`, as the recording
                         wrapper resolves it: a `Rule`, `COMPOSITE` or `NOT_DIFFERENTIABLE`
    Rule                 ``rule.save(*args, **kwargs)`` (what to save, before the op runs;
                         `RESULT` stands for the output), ``rule.backward(ctx, grad, *saved)``
                         (``ctx.needs_input_grad`` per input), ``rule.extractor(op)(args,
                         kwargs)`` (the differentiable inputs, in the order of the gradients)
    RESULT, COMPOSITE, NOT_DIFFERENTIABLE   the table's markers
    is_result(value)     whether a saved value stands for an output (``RESULT``/``RESULT[i]``),
                         and `result_index(value)` which one (None: the single output)
    fit_gradient(grad, shape, dtype)   the one place gradients are un-broadcast and cast back

>>> import ember_tensor as et
>>> from ember_tensor import dispatch
>>> entry_for(dispatch.get_operator("mul")).node_name
'MulBackward0'
"""
from ._graph import validate_grad
from ._rules import COMPOSITE, NOT_DIFFERENTIABLE, RESULT, TABLE
from ._rules._registry import Rule, _Result

__all__ = ["entry_for", "Rule", "RESULT", "COMPOSITE", "NOT_DIFFERENTIABLE", "is_result", "result_index",
           "fit_gradient"]


def entry_for(op):
    """The derivative table's entry for `op`: its `Rule`; or `COMPOSITE` (differentiated
    through the ops it calls: the table says so, or the op is composite and not in the
    table); or `NOT_DIFFERENTIABLE` (its outputs never require grad)."""
    return TABLE.get(op.name, COMPOSITE if op.composite else NOT_DIFFERENTIABLE)


def is_result(value):
    """Whether `value`, from a rule's ``save`` tuple, stands for the op's output."""
    return value.__class__ is _Result


def result_index(value):
    """Which output a ``RESULT`` marker stands for: None for the single output, else i."""
    return value.index


def fit_gradient(grad, shape, dtype):
    """`grad` made to fit an input of `shape` (summed over broadcast dimensions) and
    `dtype` (cast back): what the engine does to every gradient, in its one place."""
    return validate_grad(grad, (shape, dtype))
