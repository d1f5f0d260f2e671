"""Recording one eager call of a training step as a program (see the package docstring).
The recording run *is* the eager call: a refusal stops the recording, never the call."""
import contextlib

import ember_autograd
from ember_tensor import Tensor

from ..guarded.recording import OpStep
from ..joint.recording import _draws_random
from ..recording import OutermostOpCalls
from ..tensor_methods import patched

__all__ = []

_CONVERSIONS = ("item", "tolist", "numpy", "__array__", "__bool__", "__int__", "__float__", "__index__")


class Refused(Exception):
    """The call cannot be replayed as a whole-step program; the message says why."""


class InPlaceStep(OpStep):
    """An in-place op (an optimizer's update, ``zero_()``, a counter's ``add_(1)``): its
    effect on the values it writes is the point; it makes no new value."""


class GradsToNone:
    """``p.grad = None`` for the parameters at `positions` (``zero_grad()``'s default,
    Python code no dispatcher sees: found by comparing ``.grad`` before and after)."""

    def __init__(self, positions):
        self.positions = positions


class BackwardStep:
    """``loss.backward()``: eager's engine, as the call ran it, so that ``.grad`` is
    accumulated exactly as eagerly; afterwards the parameters' gradients are read into
    new values (`grad_slots`, None where a parameter has none)."""

    def __init__(self, loss_slot, gradient, retain_graph, grad_slots):
        self.loss_slot, self.gradient, self.retain_graph = loss_slot, gradient, retain_graph
        self.grad_slots = grad_slots


def _grad_ids(params):
    return tuple(None if p.grad is None else id(p.grad) for p in params)


class Recorder(OutermostOpCalls):
    """The dispatcher wrapper (outermost) and Tensor patches recording one eager step.

    Args:
        values: the tensors the program reads at every call (arguments, parameters and
            buffers, the parameters' gradients, optimizer state), in slot order.
        params: the parameters whose ``.grad`` the program follows.
        updated: the ids of the parameters of the optimizers found (`program.find_optimizers`).
    """

    Refused = Refused
    UNKNOWN_TENSOR = ("a tensor that is neither an argument, a parameter, buffer, gradient or optimizer state, "
                      "nor the result of an op of the call (made by a factory: a first optimizer step creating "
                      "its state, torch.zeros in the function)")

    def __init__(self, values, params, updated):
        super().__init__(values)
        self.params = params
        # The parameters whose in-place updates are replayed: those of an optimizer the
        # guards read (its hyperparameters are guarded); others' updates are refused.
        self.updated = updated
        self.param_ids = {id(p) for p in params}
        self.items = []
        self.grads = _grad_ids(params)
        self.states = []  # (value, requires_grad) right after its op

    def grads_changed(self, where):
        """Compare ``.grad`` of the parameters with the last look: a gradient set to None
        becomes a step; any other change was made by code the program does not see."""
        now = _grad_ids(self.params)
        dropped = []
        for i, (before, after) in enumerate(zip(self.grads, now)):
            if before == after:
                continue
            if after is None:
                dropped.append(i)
            else:
                self.refuse(f"a parameter's .grad was replaced {where} by code that is not an op")
        if dropped:
            self.items.append(GradsToNone(tuple(dropped)))
        self.grads = now

    def admit(self, op, args, kwargs):
        super().admit(op, args, kwargs)
        if _draws_random(op):
            raise Refused(f"random op {op.name!r} (a replay would need the random stream's state)")

    def before_op(self):
        self.grads_changed("between ops")

    def record(self, op, args, targs, tkwargs, mode, result):
        if op.inplace or result is None:  # an update in place (the fused optimizer ops return None)
            written = [args[0]] if op.inplace else [t for a in args for t in (a if isinstance(a, (list, tuple))
                                                                               else (a,)) if isinstance(t, Tensor)]
            if any(id(t) in self.param_ids and id(t) not in self.updated for t in written):
                self.refuse(f"in-place op {op.name!r} on a parameter outside the param_groups of an optimizer the "
                            f"function reads from its globals or closure (the update's hyperparameters could "
                            f"live where the guards do not look)")
            self.items.append(InPlaceStep(op, targs, tkwargs, mode, (), (), False))
            return result
        outs = (result,) if isinstance(result, Tensor) else result
        if not (isinstance(outs, (tuple, list)) and outs and all(isinstance(o, Tensor) for o in outs)):
            self.refuse(f"op {op.name!r} returned a Python value (read into Python code)")
            return result
        if any(id(o) in self.slots for o in outs):
            self.refuse(f"op {op.name!r} returned a tensor it was given")
            return result
        out_slots = tuple(self.new_value(o) for o in outs)
        for o in outs:
            self.states.append((o, o.requires_grad))
        self.items.append(OpStep(op, targs, tkwargs, mode, out_slots, tuple(tuple(o.shape) for o in outs),
                                 isinstance(result, Tensor)))
        return result

    def backward(self, original, t, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """The patched ``Tensor.backward``'s body."""
        if self.depth or self.refusal is not None:
            return original(t, gradient, retain_graph, create_graph, inputs)
        slot = self.slots.get(id(t))
        if slot is None or create_graph or inputs is not None:
            self.refuse("a backward pass with create_graph or inputs, or from a tensor the call did not make")
            return original(t, gradient, retain_graph, create_graph, inputs)
        try:
            tgradient = self.template(gradient)
        except Refused as error:
            self.refuse(str(error))
            return original(t, gradient, retain_graph, create_graph, inputs)
        self.grads_changed("before the backward pass")
        self.depth += 1
        try:
            result = original(t, gradient, retain_graph, create_graph, inputs)
        finally:
            self.depth -= 1
        grad_slots = tuple(None if p.grad is None else
                           (self.slots[id(p.grad)] if id(p.grad) in self.slots and self.grads[i] == id(p.grad)
                            else self.new_value(p.grad))
                           for i, p in enumerate(self.params))
        self.items.append(BackwardStep(slot, tgradient, retain_graph, grad_slots))
        self.grads = _grad_ids(self.params)
        return result

    def finish(self):
        """The recorded items; raises Refused."""
        self.grads_changed("at the end of the call")
        if self.refusal is not None:
            raise Refused(self.refusal)
        for t, requires_grad in self.states:
            if t.requires_grad != requires_grad:
                raise Refused("a value's requires_grad changed after its op (requires_grad_()): a replay would "
                              "not repeat it")
        return self.items


@contextlib.contextmanager
def _refusing_custom_functions(recorder):
    """A custom ``autograd.Function`` (a compiled module's node, a fused group) runs its
    forward's ops under no_grad and sets its outputs' grad_fn after them: replayed as ops,
    its backward would be lost."""
    original = ember_autograd.Function.__dict__["apply"]

    def apply(cls, *args, **kwargs):
        if not recorder.depth:
            recorder.refuse(f"a custom autograd.Function ({cls.__name__}, a compiled module inside the step?): "
                            f"its backward would be lost")
        return original.__func__(cls, *args, **kwargs)

    ember_autograd.Function.apply = classmethod(apply)
    try:
        yield
    finally:
        ember_autograd.Function.apply = original


@contextlib.contextmanager
def _refusing_engine_calls(recorder):
    """``autograd.backward(...)``/``autograd.grad(...)`` called by name: only
    ``Tensor.backward`` is recorded as a step (the engine's own ops would otherwise be
    recorded as the call's; most refuse anyway, on tensors the engine makes)."""
    originals = {name: getattr(ember_autograd, name) for name in ("backward", "grad")}

    def refusing(name, original):
        def call(*args, **kwargs):
            if not recorder.depth:
                recorder.refuse(f"autograd.{name}() inside the step (only loss.backward() is recorded)")
            recorder.depth += 1
            try:
                return original(*args, **kwargs)
            finally:
                recorder.depth -= 1
        return call

    for name, original in originals.items():
        setattr(ember_autograd, name, refusing(name, original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(ember_autograd, name, original)


@contextlib.contextmanager
def watching(recorder):
    """``Tensor.backward`` recorded, conversions to Python values and custom
    ``autograd.Function``\\ s refused while the block runs."""
    def backward(name, original):
        def method(t, gradient=None, retain_graph=None, create_graph=False, inputs=None):
            return recorder.backward(original, t, gradient, retain_graph, create_graph, inputs)
        return method

    def refused(name, original):
        def method(t, *args, **kwargs):
            if not recorder.depth:
                recorder.refuse(f"a tensor's value read into Python ({name}): the program would freeze it")
            return original(t, *args, **kwargs)
        return method

    with patched([(("backward",), backward), (_CONVERSIONS, refused)]), _refusing_custom_functions(recorder), \
            _refusing_engine_calls(recorder):
        yield
