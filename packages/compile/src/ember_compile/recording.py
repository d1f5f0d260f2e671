"""What the three recorders of eager op calls share (the joint plan's lowering,
`joint/recording.py`; the guarded traces, `guarded/recording.py`; whole training steps,
`whole_step/recording.py`): the recording's values numbered in order, argument templates,
and the outermost-op-call skeleton of the two recorders that watch a real eager call."""
import ember_autograd
from ember_tensor import Tensor

from .slots import Slot

__all__ = []


class ValueNumbering:
    """The values of one recording numbered in order (inputs first, then each op's outputs),
    kept alive so that their `id()`\\ s stay unique while it lasts, the nesting depth (the
    ops an op calls are part of it) and the first reason to refuse.

    Subclasses say how an argument that cannot be templated is refused (`reject`, which
    raises) and what to call a tensor that is no value of the recording (`UNKNOWN_TENSOR`).
    """

    UNKNOWN_TENSOR = "a tensor that is not a value of the recording"

    def __init__(self, values):
        self.slots = {}
        for i, t in enumerate(values):
            self.slots.setdefault(id(t), i)
        self.alive = list(values)
        self.depth = 0
        self.refusal = None

    def reject(self, reason):
        """Refuse an argument: raises."""
        raise NotImplementedError

    def new_value(self, t):
        """Number `t` as the recording's next value; its slot."""
        slot = self.slots[id(t)] = len(self.alive)
        self.alive.append(t)
        return slot

    def template(self, a):
        """`a` with the recording's tensors replaced by their `Slot`\\ s (lists, tuples and
        dicts rebuilt). A tensor that is no value of the recording, or one inside another
        kind of container (it would be replayed as a constant), is rejected."""
        if isinstance(a, Tensor):
            index = self.slots.get(id(a))
            if index is None:
                self.reject(self.UNKNOWN_TENSOR)
            return Slot(index)
        cls = a.__class__
        if cls is list or cls is tuple:
            return cls(self.template(x) for x in a)
        if cls is dict:
            return {k: self.template(v) for k, v in a.items()}
        if isinstance(a, (list, tuple, dict)):
            if any(isinstance(x, Tensor) for x in (a.values() if isinstance(a, dict) else a)):
                self.reject(f"a {cls.__name__} holding tensors as an op argument")
        return a


class OutermostOpCalls(ValueNumbering):
    """The dispatcher wrapper (outermost) of a recorder watching a real eager call: each
    outermost op call runs as eagerly and is recorded; a refusal stops the recording,
    never the call (the first reason is kept in `refusal`).

    Subclasses define `Refused` (the exception their checks raise), `admit` (checks before
    the op runs), `record` (what the op's result becomes; returns the result) and may
    extend `before_op`.
    """

    Refused = Exception

    def reject(self, reason):
        raise self.Refused(reason)

    def refuse(self, reason):
        """Stop recording (the call goes on); the first reason is the one reported."""
        if self.refusal is None:
            self.refusal = reason

    def admit(self, op, args, kwargs):
        """Raise `Refused` when the op call cannot be recorded (before it runs)."""
        if kwargs.get("out") is not None:
            raise self.Refused(f"op {op.name!r} with out=")

    def before_op(self):
        """Called right before a recorded op runs."""

    def record(self, op, args, targs, tkwargs, mode, result):
        raise NotImplementedError

    def __call__(self, op, args, kwargs, redispatch):
        if self.depth or self.refusal is not None:
            return redispatch(op, args, kwargs)
        try:
            self.admit(op, args, kwargs)
            targs, tkwargs = self.template(args), self.template(kwargs)
        except self.Refused as error:
            self.refuse(str(error))
            return redispatch(op, args, kwargs)
        self.before_op()
        mode = ember_autograd.is_grad_enabled()
        self.depth += 1
        try:
            result = redispatch(op, args, kwargs)
        finally:
            self.depth -= 1
        return self.record(op, args, targs, tkwargs, mode, result)
