"""The entry a `CompiledFunction` calls for a whole training step: the world it reads
(guarded), its recorded programs, and their replay (see the package docstring)."""
import warnings

import ember_autograd
from ember_tensor import Tensor, dispatch

from .. import config
from ..slots import Slot, fill
from .forward import _slots_in, lowered_forward
from .recording import BackwardStep, GradsToNone, InPlaceStep, Recorder, Refused, watching

__all__ = ["WholeStep", "find_optimizers", "find_tensors"]

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


def find_tensors(fn):
    """(namespace, name) of the tensors `fn` reads from its globals (a dict and a name) or
    closure (a cell, name None): read again at every call, as its arguments are."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    pairs = [(fn.__globals__, name) for name in code.co_names if isinstance(fn.__globals__.get(name), Tensor)]
    for cell in fn.__closure__ or ():
        try:
            if isinstance(cell.cell_contents, Tensor):
                pairs.append((cell, None))
        except ValueError:
            pass
    return pairs


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


class Abandoned(Exception):
    """A replay left the recorded program before its first effect: the call runs eagerly."""


class _Program:
    """One recorded step: its items, its output template, the grad mode it ends in, and
    the values its guard names (kept alive so that their ids stay theirs)."""

    def __init__(self, items, output, mode, n_values, values, forward, n_inputs):
        self.items, self.output, self.mode, self.n_values = items, output, mode, n_values
        self.values = values
        read = {slot for item in items for slot in _slots_read(item)} | set(_slots_in(output))
        self.unread = tuple(slot for slot in range(n_inputs) if slot not in read)
        self.forward = forward  # a ForwardNode, or None: the forward's ops replayed one by one


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
        tensors: `find_tensors`' result (a global or closure tensor, such as a batch).
    """

    def __init__(self, run_eagerly, positions, modules, optimizers, hook_tables, on_refusal, tensors=()):
        self.run_eagerly = run_eagerly
        self.positions = positions
        self.tensors = tensors
        self.modules = modules
        self.optimizers = optimizers
        self.hook_tables = hook_tables
        self.on_refusal = on_refusal
        self.programs = {}  # world key: _Program, or the reason it is not replayed
        self.replays = 0
        self.abandoned = 0
        self._warned = False

    def _world(self, args):
        """(key, values, params) of a call: what the program reads, and its guard. It runs
        at every call, so it is written for speed: one pass, few calls."""
        values = [args[i] for i in self.positions]
        for namespace, name in self.tensors:
            t = namespace.cell_contents if name is None else namespace.get(name)
            if not isinstance(t, Tensor):
                raise Refused(f"a global or closure value that was a tensor is a {type(t).__name__}")
            values.append(t)
        # The call's tensors by metadata (a new batch each step), the rest by identity too.
        call = tuple((t.shape, t.dtype, t.device, t.requires_grad) for t in values)
        seen = set(map(id, values))
        params = []
        for m in self.modules:
            for t in m._parameters.values():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    values.append(t)
                    if t.requires_grad:
                        params.append(t)
            for t in m._buffers.values():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    values.append(t)
        plain = []
        for opt in self.optimizers:
            # Its own plain attributes, its hooks (their Python code would not run) and its
            # defaults: what a custom optimizer may read besides param_groups.
            plain.append(tuple((k, v if v.__class__ in _PLAIN else len(v)) for k, v in vars(opt).items()
                               if v.__class__ in _PLAIN or ("hook" in k and isinstance(v, dict))))
            defaults = getattr(opt, "defaults", None)
            if isinstance(defaults, dict):
                plain.append(tuple((k, v if v.__class__ in _PLAIN else _plain(v)) for k, v in defaults.items()))
            for group in opt.param_groups:
                for p in group["params"]:
                    if id(p) not in seen:
                        seen.add(id(p))
                        values.append(p)
                        params.append(p)
                plain.append(tuple((k, v if v.__class__ in _PLAIN else _plain(v)) for k, v in group.items()
                                   if k != "params"))
            for p, state in opt.state.items():
                entry = [id(p)]
                for k, v in state.items():
                    if isinstance(v, Tensor):
                        entry.append(k)
                        if id(v) not in seen:
                            seen.add(id(v))
                            values.append(v)
                    else:
                        entry.append((k, _plain(v)))
                plain.append(tuple(entry))
        n_call = len(call)
        identities = tuple((id(t), t.shape, t.dtype, t.device, t.requires_grad) for t in values[n_call:])
        # Gradients are new tensors at every step (``zero_grad()`` drops them): guarded by
        # shape only, after the values guarded by identity.
        grads = []
        for p in params:
            g = p.grad
            if g is None:
                grads.append(None)
            else:
                grads.append((g.shape, g.dtype))
                if id(g) not in seen:
                    seen.add(id(g))
                    values.append(g)
        return (call, identities, tuple(grads), tuple(plain)), values, params

    def __call__(self, args):
        if any(self.hook_tables):
            return self.run_eagerly(args)
        try:
            key, values, params = self._world(args)
        except Refused as error:
            return self._refused(None, str(error), args)
        program = self.programs.get(key)
        if program.__class__ is _Program:
            mode = ember_autograd.is_grad_enabled()
            try:
                result = _replay(program, values, params)
            except Abandoned:  # a data-dependent shape changed before any effect
                ember_autograd.set_grad_enabled(mode)
                self.abandoned += 1
                return self.run_eagerly(args)
            self.replays += 1
            return result
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
            if after[3] != key[3]:
                # A plain value changed (a Python step counter, a hook): the replay would not.
                raise Refused("a plain value of an optimizer (its param_groups or state) changed during the call")
            output = _output_template(result, recorder.slots)
        except Refused as error:
            self._refused(key, str(error))
            return result
        n_call = len(key[0])
        n_kept = n_call + len(key[1])  # the values guarded by identity, not gradients
        forward = lowered_forward(items, output, len(values)) if config.ahead_of_time_backward else None
        self.programs[key] = _Program(items, output, ember_autograd.is_grad_enabled(), len(recorder.alive),
                                      values[n_call:n_kept], forward, len(values))
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


def _slots_read(item):
    """The value numbers an item reads."""
    cls = item.__class__
    if cls is BackwardStep:
        return [item.loss_slot, *_slots_in(item.gradient)]
    if cls is GradsToNone:
        return []
    return [*_slots_in(item.args), *_slots_in(item.kwargs)]


def _replay(program, values, params):
    """Run `program` on `values` (one call's world; the list becomes the replay's values);
    its output."""
    env = values
    env.extend([None] * (program.n_values - len(values)))
    for slot in program.unread:  # old gradients nothing reads: freed as eagerly
        env[slot] = None
    mode = ember_autograd.is_grad_enabled()
    # Until the first effect (a backward pass, an in-place update) the replay can still be
    # abandoned for an eager run: ``p.grad = None`` waits for it (the ops before it read
    # gradients as values, never through ``p.grad``), unless the step starts with it
    # (``opt.zero_grad()`` first: the eager run would drop the same gradients first), so
    # that the old gradients are freed before the forward runs, as eagerly.
    committed, pending = False, []
    items = program.items
    if items and items[0].__class__ is GradsToNone:
        for i in items[0].positions:
            params[i].grad = None
        items = items[1:]
    node = program.forward
    if node is not None:
        if not mode:
            mode = True
            ember_autograd.set_grad_enabled(True)
        changes = node.joint.shape_changes
        outs = node(env)  # lowered at its first call
        if outs is None:
            if node.joint.shape_changes != changes:  # a data-dependent shape, before any effect
                raise Abandoned()
            program.forward = None  # not lowered: the forward's ops one by one from now on
        else:
            for slot, o in zip(node.needed, outs):
                env[slot] = o
            pending += node.pending
            items = node.effects + program.items[node.end:]
    for item in items:
        cls = item.__class__
        if cls is GradsToNone:
            if committed:
                for i in item.positions:
                    params[i].grad = None
            else:
                pending += item.positions
            continue
        if not committed and (cls is BackwardStep or cls is InPlaceStep):
            committed = True
            for i in pending:
                params[i].grad = None
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
        if item.mode != mode:
            mode = item.mode
            ember_autograd.set_grad_enabled(mode)
        result = item.call(env)
        if cls is InPlaceStep:
            continue
        outs = (result,) if item.single else tuple(result)
        if tuple(o.shape for o in outs) != item.shapes:
            if not committed:
                raise Abandoned()
            raise RuntimeError("ember_compile: a replayed training step's op returned another shape than "
                               "the recorded call's (a data-dependent shape; effects were applied)")
        for slot, o in zip(item.out_slots, outs):
            env[slot] = o
    for i in pending if not committed else ():
        params[i].grad = None
    if mode != program.mode:
        ember_autograd.set_grad_enabled(program.mode)
    return fill(program.output, env)
