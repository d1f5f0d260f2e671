"""The traces of one guard key as a tree forking at checks, their replay, and the entry a
`CompiledFunction` calls for such a key (see the package docstring)."""
import warnings

import ember_autograd
from ember_tensor import dispatch

from .. import config
from ..slots import fill, slots_in
from .pieces import compile_piece
from .recording import Check, NotANumber, Recorder, Refused, watching_conversions

__all__ = ["GuardedTraces", "TraceTree"]


class _Abandoned(Exception):
    """The replay left the recorded patterns: the call runs eagerly."""


_UNBUILT = object()  # a node's piece not compiled yet (or dropped when the tree grew below it)


class _Node:
    """Op steps up to a check (or to the end), then a branch per recorded value of it."""

    def __init__(self, items, start):
        end = start
        while end < len(items) and items[end].__class__ is not Check:
            end += 1
        self.steps = items[start:end]
        self.check = items[end] if end < len(items) else None
        self.children = {}
        self.outputs = None  # at a leaf: (the output template, the grad mode the call ends in)
        self.piece = _UNBUILT  # the steps compiled (`pieces.compile_piece`), None: one by one

    def reads_after_steps(self):
        """The slots read after this node's steps: by its check, by the outputs of the
        patterns ending here, and by every node below it."""
        found = set()
        check = self.check
        if check is not None:
            slots_in((check.args, check.kwargs), found)
            if check.kind != "op":
                found.add(check.target[0])
        if self.outputs is not None:
            slots_in(self.outputs[0], found)
        for child in self.children.values():
            for step in child.steps:
                slots_in((step.args, step.kwargs), found)
            found |= child.reads_after_steps()
        return found

    def compiled_piece(self):
        """The steps' `CompiledPiece`, built at the node's first replay; None when they
        replay one by one."""
        if self.piece is _UNBUILT:
            try:
                self.piece = compile_piece(self.steps, self.reads_after_steps())
            except Exception:  # noqa: BLE001 - a graph fusion cannot write: the steps still replay
                # Left unbuilt, the error would abandon every replay of this node (each
                # call then eager plus a recording); one by one the steps are eager's ops.
                self.piece = None
        return self.piece

    def matches(self, items, start):
        """Whether `items` from `start` holds this node's steps and check."""
        n = len(self.steps)
        if len(items) < start + n or any(not a.same_as(b) for a, b in zip(self.steps, items[start:start + n])):
            return False
        rest = items[start + n] if start + n < len(items) else None
        return (rest is None) == (self.check is None) and (rest is None or self.check.same_as(rest))


class TraceTree:
    """The recorded branch patterns of one guard key, sharing their common prefixes."""

    def __init__(self):
        self.root = None
        self.patterns = 0

    def insert(self, items, outputs):
        """Add a recorded trace; False where it contradicts one recorded before (the Python
        code read something the guards do not see: it is then not replayed)."""
        if self.root is None:
            self.root = _Node(items, 0)
        node, start, path = self.root, 0, []
        while True:
            if not node.matches(items, start):
                return False
            path.append(node)
            start += len(node.steps)
            if node.check is None:
                if node.outputs is None:
                    node.outputs = outputs
                    self.patterns += 1
                    _drop_pieces(path)
                return True
            key = items[start].key
            start += 1
            child = node.children.get(key)
            if child is None:
                child = node.children[key] = _Node(items, start)
                _drop_pieces(path)
            node = child

    def replay(self, env):
        """Run the recorded pattern the checks select on `env` (inputs, then parameters and
        buffers); the outputs, or raises _Abandoned."""
        node = self.root
        while True:
            piece = node.compiled_piece()
            if piece is not None:
                if ember_autograd.is_grad_enabled() != piece.mode:
                    ember_autograd.set_grad_enabled(piece.mode)
                if not piece.run(env):
                    raise _Abandoned()  # a data-dependent shape changed
            for step in node.steps if piece is None else ():
                if ember_autograd.is_grad_enabled() != step.mode:
                    ember_autograd.set_grad_enabled(step.mode)
                result = step.call(env)
                if step.single and step.shapes[0] == tuple(result.shape):  # the usual case
                    env.append(result)
                    continue
                outs = (result,) if step.single else tuple(result)
                if tuple(tuple(o.shape) for o in outs) != step.shapes:
                    raise _Abandoned()  # a data-dependent shape (nonzero, masked_select) changed
                env.extend(outs)
            check = node.check
            if check is None:
                outputs, mode = node.outputs
                if ember_autograd.is_grad_enabled() != mode:
                    ember_autograd.set_grad_enabled(mode)
                return fill(outputs, env)
            if ember_autograd.is_grad_enabled() != check.mode:
                ember_autograd.set_grad_enabled(check.mode)
            try:
                node = node.children.get(check.compute(env))
            except NotANumber:
                node = None
            if node is None:
                raise _Abandoned()

    def segments(self):
        """The op names of each straight-line piece between checks, over all patterns."""
        found, stack = [], [self.root] if self.root is not None else []
        while stack:
            node = stack.pop()
            found.append([step.op for step in node.steps])
            stack.extend(node.children.values())
        return found

    def checks(self):
        """The checks the recorded patterns hold (each a break of the graph)."""
        found, stack = [], [self.root] if self.root is not None else []
        while stack:
            node = stack.pop()
            if node.check is not None:
                found.append(node.check)
            stack.extend(node.children.values())
        return found


def _drop_pieces(path):
    """The tree grew below `path`'s nodes: what the rest of it reads of their values may
    have grown too, so their pieces are compiled again at their next replay."""
    for node in path:
        node.piece = _UNBUILT


class GuardedTraces:
    """The entry of a guard key whose capture hit data-dependent control flow.

    Args:
        run_eagerly: calls the compiled module or function on a call's arguments.
        positions: the tensor arguments' positions.
        constants: (dict, name) of the parameters and buffers a trace reads by reference
            (read again on every call, so a replaced parameter is seen).
        hook_tables: the modules' hook dicts: while one is not empty, calls run eagerly (a
            replay would not run the hooks' Python code).
        on_refusal: called with the reason when a recording is refused.
    """

    def __init__(self, run_eagerly, positions, constants, hook_tables, on_refusal):
        self.run_eagerly = run_eagerly
        self.positions = positions
        self.constants = constants
        self.hook_tables = hook_tables
        self.on_refusal = on_refusal
        self.tree = TraceTree()
        self.refusal = None
        self.replays = 0
        self.abandoned = 0
        self._warned = False

    def _inputs(self, args):
        inputs = [args[i] for i in self.positions]
        inputs += [d.get(name) for d, name in self.constants]
        return inputs

    def __call__(self, args):
        if self.refusal is not None or any(self.hook_tables):
            return self.run_eagerly(args)
        if self.tree.root is not None:
            env = self._inputs(args)
            mode = ember_autograd.is_grad_enabled()
            try:
                if any(t is None for t in env):
                    raise _Abandoned()
                result = self.tree.replay(env)
                self.replays += 1
                return result
            except Exception:  # a new pattern, or an error the eager run will raise itself
                ember_autograd.set_grad_enabled(mode)
                self.abandoned += 1
        if self.tree.patterns >= config.limit():
            if not self._warned:
                self._warned = True
                warnings.warn(f"ember_compile hit config.cache_size_limit ({config.limit()}) branch patterns of "
                              f"one guard key: new patterns run eagerly", RuntimeWarning, stacklevel=3)
            return self.run_eagerly(args)
        return self._record(args)

    def _record(self, args):
        inputs = self._inputs(args)
        if any(t is None for t in inputs):
            return self.run_eagerly(args)
        recorder = Recorder(inputs)
        dispatch.register_wrapper(recorder, outermost=True)
        try:
            with watching_conversions(recorder):
                result = self.run_eagerly(args)
        finally:
            dispatch.unregister_wrapper(recorder)
        try:
            items, outputs, mode = recorder.finish(result)
        except Refused as error:
            self.refusal = str(error)
            self.tree = TraceTree()
            self.on_refusal(self.refusal)
            return result
        if not recorder.nan:  # a NaN check never passes again: nothing to keep
            self.tree.insert(items, (outputs, mode))
        return result
