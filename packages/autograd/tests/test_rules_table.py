"""The derivative table covers every op ember_tensor registers, exactly once."""
import pytest

import ember_autograd  # noqa: F401  (fills the table)
from ember_autograd._rules import COMPOSITE, NOT_DIFFERENTIABLE, TABLE
from ember_autograd._rules._registry import Rule, derivative
from ember_tensor import dispatch as _dispatch


def test_every_registered_op_has_an_entry():
    # Users' ops (ember.kernel, "custom::...") have a rule only when they are given derivatives;
    # ember-tensor's composite ops are named in the table too (layers above may register
    # composites without an entry: they are differentiated through their parts).
    missing = sorted(name for name in _dispatch.operators() if name not in TABLE and not name.startswith("custom::"))
    assert missing == []


def test_every_entry_names_a_registered_op():
    unknown = sorted(name for name in TABLE if name not in _dispatch.operators())
    assert unknown == []


def test_ops_marked_composite_are_differentiated_through_their_parts():
    # Operator.composite says the op only calls other ops (a tracer may record those
    # instead); autograd must then differentiate it through them too.
    marked = sorted(name for name, op in _dispatch.operators().items() if op.composite)
    assert "mse_loss" in marked and "cross_entropy_loss" in marked
    assert [name for name in marked if TABLE.get(name) is not COMPOSITE] == []


def test_entries_are_rules_or_markers():
    for name, entry in TABLE.items():
        assert entry is COMPOSITE or entry is NOT_DIFFERENTIABLE or isinstance(entry, Rule), name


def test_a_second_entry_for_an_op_is_refused():
    with pytest.raises(RuntimeError, match="two entries"):
        derivative("add")(lambda ctx, grad: grad)
    assert isinstance(TABLE["add"], Rule)


def test_rules_name_real_parameters_of_their_ops():
    ops = _dispatch.operators()
    for name, entry in TABLE.items():
        if isinstance(entry, Rule):
            entry.extractor(ops[name])  # raises TypeError for an unknown parameter name
