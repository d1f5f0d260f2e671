"""Recording one eager call as a guarded trace: op steps and value checks (see the package
docstring). The recording run *is* the eager call: a refusal stops the recording, never
the call."""
import ember_autograd
import ember_tensor
from ember_tensor import Tensor

from ..joint.recording import _draws_random
from ..recording import OutermostOpCalls
from ..slots import Slot, fill
from ..tensor_methods import patched

__all__ = []

# The Tensor methods that hand a tensor's value to Python, kept unpatched for the replay.
_CHECKED = ("item", "tolist", "__bool__", "__int__", "__float__", "__index__")
_REFUSED = ("numpy", "__array__")  # the Python side gets memory, not a value to compare
ORIGINAL_CONVERSIONS = {name: Tensor.__dict__[name] for name in _CHECKED if name in Tensor.__dict__}


class Refused(Exception):
    """The call cannot be replayed from a trace; the message says why."""


class NotANumber(Exception):
    """A checked value is (or holds) NaN: it equals nothing, so no replay can pass it."""


def value_key(value):
    """A hashable key equal only for exactly equal Python values: floats by their bits
    (``0.0`` and ``-0.0`` differ, as Python code can tell them apart), NaN refused."""
    cls = value.__class__
    if cls is bool or cls is int or cls is str or value is None:
        return (cls, value)
    if cls is float:
        if value != value:
            raise NotANumber()
        return (cls, value.hex())
    if cls is complex:
        return (cls, value_key(value.real), value_key(value.imag))
    if isinstance(value, (list, tuple)):
        return (cls, tuple(value_key(v) for v in value))
    raise Refused(f"a Python value of type {cls.__name__} read from a tensor")


def same(a, b):
    """Equality of argument templates, NaN equal to NaN (a recorded constant argument)."""
    if a.__class__ is not b.__class__:
        return False
    if a.__class__ is float:
        return a == b or (a != a and b != b)
    if a.__class__ is list or a.__class__ is tuple:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if a.__class__ is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    try:
        return bool(a == b)
    except Exception:  # an argument with no plain equality: treat the traces as different
        return False


class OpStep:
    """One outermost op call: run through the dispatcher (autograd records it as eagerly)
    under the grad mode it ran in; its outputs' shapes must be the recorded ones."""

    def __init__(self, op, args, kwargs, mode, out_slots, shapes, single):
        self.op, self.args, self.kwargs, self.mode = op, args, kwargs, mode
        self.out_slots, self.shapes, self.single = out_slots, shapes, single
        # The replay's fast path: flat positional arguments, no keywords (most op calls).
        flat = not kwargs and all(a.__class__ is Slot or not isinstance(a, (list, tuple, dict)) for a in args)
        self.flat = [(i, a.index) for i, a in enumerate(args) if a.__class__ is Slot] if flat else None

    def call(self, env):
        """Run the op on the values of `env`."""
        if self.flat is not None:
            args = list(self.args)
            for position, index in self.flat:
                args[position] = env[index]
            return self.op(*args)
        return self.op(*fill(self.args, env), **fill(self.kwargs, env))

    def same_as(self, other):
        return other.__class__ is OpStep and other.op is self.op and other.mode == self.mode and \
            other.out_slots == self.out_slots and same(other.args, self.args) and same(other.kwargs, self.kwargs)


class Check:
    """A tensor value handed to Python: a conversion method on a value, or an op returning
    a Python value (``equal``); `key` is the recorded value's `value_key`."""

    def __init__(self, kind, target, args, kwargs, mode, key):
        self.kind, self.target, self.args, self.kwargs = kind, target, args, kwargs
        self.mode, self.key = mode, key

    def compute(self, env):
        """The value's key in this replay (raises NotANumber)."""
        if self.kind == "op":
            return value_key(self.target(*fill(self.args, env), **fill(self.kwargs, env)))
        slot, name = self.target
        return value_key(ORIGINAL_CONVERSIONS[name](env[slot], *self.args, **self.kwargs))

    def same_as(self, other):
        return other.__class__ is Check and other.kind == self.kind and other.mode == self.mode and \
            (other.target is self.target or other.target == self.target) and same(other.args, self.args) and \
            same(other.kwargs, self.kwargs)

    def describe(self):
        return self.target.name if self.kind == "op" else f"Tensor.{self.target[1]}"


def _same_contents(a, b):
    """Whether `a` still holds what its copy `b` held (NaN where NaN was)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.is_floating_point:
        nan_a, nan_b = ember_tensor.isnan(a), ember_tensor.isnan(b)
        zero = ember_tensor.zeros_like(a)
        return ember_tensor.equal(nan_a, nan_b) and \
            ember_tensor.equal(ember_tensor.where(nan_a, zero, a), ember_tensor.where(nan_b, zero, b))
    return ember_tensor.equal(a, b)


class Recorder(OutermostOpCalls):
    """The dispatcher wrapper (outermost) and conversion patches recording one eager call.

    Args:
        inputs: the call's tensors, then the parameters and buffers read by reference.
    """

    Refused = Refused
    UNKNOWN_TENSOR = ("a tensor that is neither an input, a parameter or buffer, nor the result of an op of the "
                      "call (a tensor made by a factory such as torch.zeros, or read from a global)")

    def __init__(self, inputs):
        super().__init__(inputs)
        self.items = []            # OpStep and Check, in call order
        self.states = []           # (tensor, requires_grad, grad_fn) right after its op
        self.nan = False
        # What an op could change behind the trace's back: contents of tensors that do not
        # require grad (buffers, running statistics passed as arguments) and gradients.
        self.before = [(t, t.clone() if not t.requires_grad else None, _grad_state(t)) for t in inputs]

    def admit(self, op, args, kwargs):
        if op.inplace:
            raise Refused(f"in-place op {op.name!r} (its effect would happen again if a replay is abandoned)")
        super().admit(op, args, kwargs)
        if _draws_random(op):
            raise Refused(f"random op {op.name!r} (a replay would draw again)")

    def record(self, op, args, targs, tkwargs, mode, result):
        self._record(op, targs, tkwargs, mode, result)
        return result

    def _record(self, op, targs, tkwargs, mode, result):
        outs = (result,) if isinstance(result, Tensor) else result
        if isinstance(outs, (tuple, list)) and outs and all(isinstance(o, Tensor) for o in outs):
            out_slots = []
            for o in outs:
                out_slots.append(self.new_value(o))
                self.states.append((o, o.requires_grad, o.grad_fn))
            shapes = tuple(tuple(o.shape) for o in outs)
            self.items.append(OpStep(op, targs, tkwargs, mode, tuple(out_slots), shapes, isinstance(result, Tensor)))
            return
        self._check("op", op, targs, tkwargs, mode, result)

    def _check(self, kind, target, targs, tkwargs, mode, value):
        try:
            key = value_key(value)
        except NotANumber:
            self.nan = True
            return
        except Refused as error:
            self.refuse(f"{getattr(target, 'name', target)}: {error}")
            return
        self.items.append(Check(kind, target, targs, tkwargs, mode, key))

    def conversion(self, name, t, args, kwargs, original):
        """A patched conversion method's body."""
        if self.depth or self.refusal is not None:
            return original(t, *args, **kwargs)
        index = self.slots.get(id(t))
        if index is None:
            self.refuse(f"a Python value ({name}) read from a tensor the call did not get or make")
            return original(t, *args, **kwargs)
        try:
            targs, tkwargs = self.template(args), self.template(kwargs)
        except Refused as error:
            self.refuse(str(error))
            return original(t, *args, **kwargs)
        mode = ember_autograd.is_grad_enabled()
        self.depth += 1  # ops inside the conversion are part of it
        try:
            value = original(t, *args, **kwargs)
        finally:
            self.depth -= 1
        self._check("conversion", (index, name), targs, tkwargs, mode, value)
        return value

    def finish(self, result):
        """``(items, output template, grad mode at the end)`` of the recorded call, called
        as it returns; raises Refused."""
        mode = ember_autograd.is_grad_enabled()
        if self.refusal is not None:
            raise Refused(self.refusal)
        for t, requires_grad, grad_fn in self.states:
            if t.requires_grad != requires_grad or t.grad_fn is not grad_fn:
                raise Refused("a value changed after its op (requires_grad_(), a custom autograd.Function, "
                              "a backward pass): a replay would not repeat it")
        for t, copy, grad in self.before:
            if _grad_state(t) != grad:
                raise Refused("a gradient changed during the call (a backward pass inside the function)")
            if copy is not None and not _same_contents(t, copy):
                raise Refused("an op wrote into an input or buffer (running statistics updated inside an op): "
                              "an abandoned replay would write it twice")
        return self.items, self._output(result), mode

    def _output(self, value):
        if isinstance(value, Tensor):
            index = self.slots.get(id(value))
            if index is None:
                raise Refused("the call returns a tensor that is not an input, a parameter or buffer, nor the "
                              "result of an op")
            return Slot(index)
        cls = value.__class__
        if cls is list or cls is tuple:
            return cls(self._output(v) for v in value)
        if cls is dict:
            return {k: self._output(v) for k, v in value.items()}
        if cls in (bool, int, float, complex, str) or value is None:
            return value
        raise Refused(f"the call returns a {cls.__name__} (only tensors, plain values and tuples, lists and "
                      f"dicts of them are replayed)")


def _grad_state(t):
    g = t.grad
    return None if g is None else (id(g), g._version)


def watching_conversions(recorder):
    """Tensor's conversion methods reporting to `recorder` while the block runs: those
    giving a Python value become checks, those handing out tensor memory refuse."""
    def checked(name, original):
        def method(t, *args, **kwargs):
            return recorder.conversion(name, t, args, kwargs, original)
        return method

    def refused(name, original):
        def method(t, *args, **kwargs):
            if not recorder.depth:
                recorder.refuse(f"tensor memory handed to Python ({name})")
            return original(t, *args, **kwargs)
        return method

    return patched([(_CHECKED, checked), (_REFUSED, refused)])
