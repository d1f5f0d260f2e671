"""Lowering one run of a captured graph into plan steps: the dispatcher wrapper that records
each outermost op call, what it refuses (see the package docstring), and the random
stream's save and restore around the lowering run."""
import contextlib
import inspect

import ember_tensor
from ember_autograd import derivatives as _table
from ember_tensor import Tensor

from ..capture import _RANDOM_PREFIXES
from ..tensor_methods import patched
from ..recording import ValueNumbering
from .plan import NotLowered, _Step

__all__ = []


_CONVERSIONS = ("item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__")
_draws = {}


def _draws_random(op):
    """Whether `op` draws random numbers (the plan replays the random stream around it)."""
    found = _draws.get(op)
    if found is None:
        try:
            found = "generator" in inspect.signature(op.impl).parameters
        except (TypeError, ValueError):
            found = False
        found = _draws[op] = found or op.name.startswith(_RANDOM_PREFIXES)
    return found


def _rng_states():
    """The CPU generator's state and, once CUDA is in use, every GPU's."""
    cuda = ember_tensor.cuda
    return ember_tensor.get_rng_state(), cuda.get_rng_state_all() if cuda.is_initialized() else None


def _set_rng_states(states):
    ember_tensor.set_rng_state(states[0])
    if states[1] is not None:
        ember_tensor.cuda.set_rng_state_all(states[1])


@contextlib.contextmanager
def _rng_restored(states=None):
    """Run the block (from `states`, when given) and leave the generators as they were."""
    now = _rng_states()
    if states is not None:
        _set_rng_states(states)
    try:
        yield
    finally:
        _set_rng_states(now)


class _Recorder(ValueNumbering):
    """The dispatcher wrapper that lowers one run of the graph into steps."""

    UNKNOWN_TENSOR = ("a tensor that is neither a graph input, a parameter or buffer, nor the result of an op of "
                      "the graph")

    def __init__(self, tensors, buffers):
        super().__init__(tensors)
        self.buffers = buffers  # the input slots an in-place op may write (buffers not requiring grad)
        self.n_inputs = len(tensors)
        self.steps = []

    def refuse(self, reason):
        """Refuse the lowering: raises NotLowered (the reason is kept even if the program
        catches the exception)."""
        self.refusal = self.refusal or reason
        raise NotLowered(reason)

    reject = refuse

    def fresh(self, t):
        """A step allocating a tensor like `t` (made by a factory, which is no op), whose
        contents an in-place draw overwrites; its slot."""
        slot = self.new_value(t)
        self.steps.append(_Step(_Empty(tuple(t.shape), t.dtype, t.device), _table.NOT_DIFFERENTIABLE, (), {},
                                (slot,), True, (t,)))
        return slot

    def __call__(self, op, args, kwargs, redispatch):
        if self.depth:
            return redispatch(op, args, kwargs)
        entry = _table.entry_for(op)
        if entry is _table.COMPOSITE:
            return redispatch(op, args, kwargs)  # its parts come through here
        # Refused before running, so that an effect never happens twice (here and eagerly).
        random = _draws_random(op)
        if random and kwargs.get("generator") is not None:
            self.refuse(f"random op {op.name!r} with its own generator (its state is not replayed)")
        inplace = op.inplace
        if inplace:
            # Into a buffer (BatchNorm's num_batches_tracked) or a value the graph made
            # (dropout's mask, drawn into an empty tensor): replayed on every call, with no
            # gradient (the plan checks that nothing differentiable flows in).
            target = self.slots.get(id(args[0])) if args and isinstance(args[0], Tensor) else None
            if target is None and random and isinstance(args[0], Tensor) and args[0].is_contiguous() and \
                    not args[0].requires_grad:
                target = self.fresh(args[0])  # ``empty(shape).bernoulli_(p)``: the draw fills it all
            if target is None:
                self.refuse("a tensor that is neither a graph input, a parameter or buffer, nor the result of "
                            "an op of the graph")
            if target < self.n_inputs and target not in self.buffers:
                self.refuse(f"in-place op {op.name!r} on an input or parameter")
            # A write through a view reaches other values (and eagerly their versions).
            memory = args[0].untyped_storage().data_ptr()
            if any(t is not args[0] and t.untyped_storage().data_ptr() == memory for t in self.alive):
                self.refuse(f"in-place op {op.name!r} on a tensor that shares memory with another value")
        if kwargs.get("out") is not None:
            self.refuse(f"op {op.name!r} with out=")
        targs, tkwargs = self.template(args), self.template(kwargs)
        self.depth += 1
        try:
            result = redispatch(op, args, kwargs)
        finally:
            self.depth -= 1
        if inplace:
            self.steps.append(_Step(op, _table.NOT_DIFFERENTIABLE, targs, tkwargs, (), True, (), inplace=True,
                                    random=random))
            return result
        if args and result is args[0]:
            return result  # the op returned its input (contiguous(), to() with nothing to do)
        single = isinstance(result, Tensor)
        outs = (result,) if single else result
        if not isinstance(outs, (tuple, list)) or not all(isinstance(o, Tensor) for o in outs):
            self.refuse(f"op {op.name!r} returned a value other than tensors")
        out_slots = []
        for o in outs:
            if id(o) in self.slots:
                self.refuse(f"op {op.name!r} returned a tensor it was given")
            out_slots.append(self.new_value(o))
        self.steps.append(_Step(op, entry, targs, tkwargs, tuple(out_slots), single, outs, random=random))
        return result


def _watching_conversions(recorder):
    """While lowering: a graph value turned into a Python value refuses the lowering (the
    value would be frozen into the plan)."""
    def refusing(name, original):
        def method(t, *args, **kwargs):
            if not recorder.depth and id(t) in recorder.slots:
                recorder.refuse(f"a graph value converted to a Python value ({name})")
            return original(t, *args, **kwargs)
        return method

    return patched([(_CONVERSIONS, refusing)])


class _Empty:
    """The step allocating a tensor that a random op fills in place (dropout's mask)."""

    name = "empty"

    def __init__(self, shape, dtype, device):
        self.shape, self.dtype, self.device = shape, dtype, device

    def __call__(self):
        return ember_tensor.empty(self.shape, dtype=self.dtype, device=self.device)
