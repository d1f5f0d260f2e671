"""The entry a `CompiledFunction` calls for a whole training step: the world it reads
(guarded), its recorded programs, and their replay (see the package docstring)."""
import warnings

import ember_autograd
from ember_tensor import Tensor, dispatch

from .. import config
from ..slots import Slot, fill
from .recording import BackwardStep, GradsToNone, InPlaceStep, Recorder, Refused, watching

__all__ = ["WholeStep", "find_optimizers"]

_PLAIN = (bool, int, float, str, type(None))


def find_optimizers(fn):
    """The optimizer-like objects `fn` reads from its globals or closure: anything with a
    ``param_groups`` list and a ``state`` mapping (ember-optim stands above this package)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    candidates = [fn.__globals__.get(name) for name in code.co_names]
    for cell in fn.__closure__ or ():
        try:
            candidates.append(cell.cell_contents)
        except ValueError:
            pass
    found = []
    for c in candidates:
        if isinstance(getattr(c, "param_groups", None), list) and hasattr(getattr(c, "state", None), "items") \
                and all(c is not f for f in found):
            found.append(c)
    return found


def _plain(value):
    """`value` as a hashable guard entry; a tensor by identity and metadata."""
    if isinstance(value, Tensor):
        return ("tensor", id(value), tuple(value.shape), value.dtype, value.device, value.requires_grad)
    if value.__class__ in _PLAIN:
        return value
    if isinstance(value, (tuple, list)):
        return (value.__class__, tuple(_plain(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((k, _plain(v)) for k, v in value.items()))
    raise Refused(f"optimizer state of type {type(value).__name__} (not a tensor or a plain value)")


class _Program:
    """One recorded step: its items, its output template, the grad mode it ends in, and
    the values its guard names (kept alive so that their ids stay theirs)."""

    def __init__(self, items, output, mode, n_values, values):
        self.items, self.output, self.mode, self.n_values = items, output, mode, n_values
        self.values = values


class WholeStep:
    """A guard key whose call runs a backward pass or in-place ops (a training step):
    recorded once per *world* — the identities and metadata of the parameters, buffers,
    optimizer state tensors, which parameters have a ``.grad``, and every plain value of
    the optimizers' ``param_groups`` (the learning rate) and state — and replayed.

    Args:
        run_eagerly: calls the compiled function on a call's arguments.
        positions: the tensor arguments' positions.
        modules: the modules the function reads (their parameters and buffers).
        optimizers: `find_optimizers`' result.
        hook_tables: the modules' hook dicts (while one is not empty, calls run eagerly).
        on_refusal: called with the reason when a recording is refused.
    """

    def __init__(self, run_eagerly, positions, modules, optimizers, hook_tables, on_refusal):
        self.run_eagerly = run_eagerly
        self.positions = positions
        self.modules = modules
        self.optimizers = optimizers
        self.hook_tables = hook_tables
        self.on_refusal = on_refusal
        self.programs = {}  # world key: _Program, or the reason it is not replayed
        self.replays = 0
        self._warned = False

    def _world(self, args):
        """(key, values, params) of a call: what the program reads, and its guard."""
        values = [args[i] for i in self.positions]
        seen = {id(t) for t in values}
        params = []
        for m in self.modules:
            for table in (m._parameters, m._buffers):
                for t in table.values():
                    if t is not None and id(t) not in seen:
                        seen.add(id(t))
                        values.append(t)
                        if t.requires_grad and table is m._parameters:
                            params.append(t)
        plain = []
        for opt in self.optimizers:
            # Its hooks (their Python code would not run) and its own plain attributes and
            # defaults (what a custom optimizer may read besides param_groups).
            plain.append(tuple((k, len(v)) for k, v in sorted(vars(opt).items()) if "hook" in k and isinstance(v, dict)))
            plain.append(tuple((k, v) for k, v in sorted(vars(opt).items()) if v.__class__ in _PLAIN))
            defaults = getattr(opt, "defaults", None)
            if isinstance(defaults, dict):
                plain.append(_plain(defaults))
            for group in opt.param_groups:
                for p in group["params"]:
                    if id(p) not in seen:
                        seen.add(id(p))
                        values.append(p)
                        params.append(p)
                plain.append(tuple((k, _plain(v)) for k, v in group.items() if k != "params"))
            for p, state in opt.state.items():
                entry = [id(p)]
                for k, v in state.items():
                    entry.append((k, _plain(v)))
                    if isinstance(v, Tensor) and id(v) not in seen:
                        seen.add(id(v))
                        values.append(v)
                plain.append(tuple(entry))
        grads = tuple(None if p.grad is None else (tuple(p.grad.shape), p.grad.dtype) for p in params)
        # Gradients are new tensors at every step (``zero_grad()`` drops them): guarded by
        # shape only, after the values guarded by identity.
        key = (tuple(_plain(t) for t in values[len(self.positions):]), grads, tuple(plain))
        for p in params:
            g = p.grad
            if g is not None and id(g) not in seen:
                seen.add(id(g))
                values.append(g)
        return key, values, params

    def __call__(self, args):
        if any(self.hook_tables):
            return self.run_eagerly(args)
        try:
            key, values, params = self._world(args)
        except Refused as error:
            return self._refused(None, str(error), args)
        program = self.programs.get(key)
        if program.__class__ is _Program:
            self.replays += 1
            return _replay(program, values, params)
        if program is not None:
            return self.run_eagerly(args)
        if len(self.programs) >= config.limit():
            if not self._warned:
                self._warned = True
                warnings.warn(f"ember_compile hit config.cache_size_limit ({config.limit()}) recorded programs of "
                              f"one training step: new states of the parameters and optimizers run eagerly",
                              RuntimeWarning, stacklevel=3)
            return self.run_eagerly(args)
        return self._record(key, values, params, args)

    def _refused(self, key, reason, args=None):
        if key is not None:
            self.programs[key] = reason
        self.on_refusal(reason)
        return None if args is None else self.run_eagerly(args)

    def _record(self, key, values, params, args):
        updated = {id(p) for opt in self.optimizers for group in opt.param_groups for p in group["params"]}
        recorder = Recorder(values, params, updated)
        dispatch.register_wrapper(recorder, outermost=True)
        try:
            with watching(recorder):
                result = self.run_eagerly(args)
        finally:
            dispatch.unregister_wrapper(recorder)
        try:
            items = recorder.finish()
            after, _, _ = self._world(args)
            if after[2] != key[2]:
                # A plain value changed (a Python step counter, a hook): the replay would not.
                raise Refused("a plain value of an optimizer (its param_groups or state) changed during the call")
            output = _output_template(result, recorder.slots)
        except Refused as error:
            self._refused(key, str(error))
            return result
        n_kept = len(self.positions) + len(key[0])  # the values guarded by identity, not gradients
        self.programs[key] = _Program(items, output, ember_autograd.is_grad_enabled(), len(recorder.alive),
                                      values[len(self.positions):n_kept])
        return result


def _output_template(value, slots):
    if isinstance(value, Tensor):
        index = slots.get(id(value))
        if index is None:
            raise Refused("the call returns a tensor the program does not make")
        return Slot(index)
    if value.__class__ in (list, tuple):
        return value.__class__(_output_template(v, slots) for v in value)
    if value.__class__ in _PLAIN:
        return value
    raise Refused(f"the call returns a {type(value).__name__}")


_ORIGINAL_BACKWARD = Tensor.backward


def _replay(program, values, params):
    """Run `program` on `values` (one call's world); its output."""
    env = values + [None] * (program.n_values - len(values))
    for item in program.items:
        cls = item.__class__
        if cls is BackwardStep:
            gradient = None if item.gradient is None else fill(item.gradient, env)
            _ORIGINAL_BACKWARD(env[item.loss_slot], gradient, item.retain_graph)
            for p, slot in zip(params, item.grad_slots):
                g = p.grad
                if (g is None) != (slot is None):
                    raise RuntimeError("ember_compile: a replayed training step's backward pass set other "
                                       "gradients than the recorded call's (effects were applied)")
                if slot is not None:
                    env[slot] = g
            continue
        if cls is GradsToNone:
            for i in item.positions:
                params[i].grad = None
            continue
        if ember_autograd.is_grad_enabled() != item.mode:
            ember_autograd.set_grad_enabled(item.mode)
        result = item.call(env)
        if cls is InPlaceStep:
            continue
        if item.single:
            if tuple(result.shape) != item.shapes[0]:
                raise RuntimeError("ember_compile: a replayed training step's op returned another shape than "
                                   "the recorded call's (a data-dependent shape; effects were applied)")
            env[item.out_slots[0]] = result
        else:
            for slot, o in zip(item.out_slots, result):
                env[slot] = o
    if ember_autograd.is_grad_enabled() != program.mode:
        ember_autograd.set_grad_enabled(program.mode)
    return fill(program.output, env)
