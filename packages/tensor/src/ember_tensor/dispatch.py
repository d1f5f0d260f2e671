"""The dispatcher, for the layers above ember-tensor: every public op goes through it, and
layers above register wrappers around it (autograd recording, tracing for export and fx,
autocast, the profiler, anomaly mode) and fill the autograd slot.

Declared for the layers above (they import this module, never ``ember_tensor._dispatch``):
    Operator, op, operators, get_operator   the op registry
    register_wrapper, unregister_wrapper    wrappers composed around every op call
    call_impl                               the innermost redispatch (the op's implementation)
    install_autograd                        ember-autograd's hooks (backward, hooks, rules)
    result_type_of                          the dtype promotion ops apply to their operands
    is_tracing, tracing                     whether a trace records op calls (and the recorders'
                                            context manager saying so)

>>> import ember_tensor as et
>>> from ember_tensor import dispatch
>>> dispatch.get_operator("add") is dispatch.operators()["add"]
True
"""
from ._autograd_slot import install as install_autograd
from ._dispatch import (
    Operator, call_impl, is_tracing, op, operators, register_wrapper, tracing, unregister_wrapper, _OPERATORS,
)
from ._dtype import result_type_of

__all__ = ["Operator", "op", "operators", "get_operator", "register_wrapper", "unregister_wrapper", "call_impl",
           "install_autograd", "result_type_of", "is_tracing", "tracing"]


def get_operator(name):
    """The registered Operator called `name` (KeyError when there is none)."""
    return _OPERATORS[name]
