"""A compiled callable: a cache of captured graphs, one per set of guards.

On a call, the guards are evaluated into a key: for each argument, a tensor's shape
(unless ``dynamic=True``), dtype, device and requires_grad, any other value itself; grad
mode; and the Python values the traced code read that could change its trace — every
module's ``training`` flag and other plain attributes (numbers, strings, bools, None), and
the plain values the traced function (or each traced-through module's ``forward``) reads
from its globals or closure. A key seen before runs its graph. A new key compiles: capture
(`capture.capture`), then the backend. What cannot be captured runs eagerly for that key,
a graph break (``fullgraph=True`` raises instead). After ``config.cache_size_limit`` keys,
new ones run eagerly with a warning, as PyTorch's recompile limit does.
"""
import inspect
import time
import warnings

import ember_autograd
import ember_fx
from ember_nn import Module
from ember_tensor import Tensor

from . import backends, config, trace_log
from .capture import bind_arguments, capture, referenced_modules, switches_grad_mode
from .exc import Unsupported
from .guarded import GuardedTraces
from .joint import JointCompiled
from .whole_step import WholeStep, find_optimizers, find_tensors

__all__ = ["CompiledFunction", "BreakReason"]

_PLAIN = (bool, int, float, str, type(None))
_HOOK_TABLES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
                "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs")


class BreakReason:
    """Why a call was not captured (``torch._dynamo``'s GraphBreak reason)."""

    def __init__(self, reason, user_stack=()):
        self.reason = reason
        self.user_stack = list(user_stack)

    def __repr__(self):
        return f"BreakReason(reason={self.reason!r})"


def _plain_globals(fn):
    """(namespace, name) pairs of the plain values `fn` reads from globals or its closure."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    pairs = [(fn.__globals__, name) for name in code.co_names
             if isinstance(fn.__globals__.get(name, object()), _PLAIN)]
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            if isinstance(cell.cell_contents, _PLAIN):
                pairs.append((cell, None))
        except ValueError:
            pass
    return pairs


def _reads_a_tensor_value(error):
    """Whether a capture broke on Python control flow or a Python value of a tensor: fx's
    TraceError (``if``, ``while``), or ``int()``/``float()``/``range()`` given a Proxy."""
    cause = error.__cause__
    return isinstance(cause, ember_fx.TraceError) or (isinstance(cause, TypeError) and "'Proxy'" in str(cause))


def _is_training_step(error):
    """Whether a capture broke on a backward pass or an in-place op on real tensors (an
    optimizer's update): what `whole_step` records."""
    message = str(error)
    return message.startswith("a backward pass") or message.startswith("in-place op")


class CompiledFunction:
    """What ``compile`` makes of a module or function (an `OptimizedModule` calls one).

    Attributes:
        graphs: {guard key: the callable compiled for it}.
        breaks: the `BreakReason` of each key that runs eagerly.
        guarded: the `GuardedTraces` of the keys replayed from guarded traces.
        whole_steps: the `WholeStep`\\ s of the keys replayed as training steps.
        compile_times: seconds each compile took (capture and backend).
    """

    def __init__(self, root, *, backend="inductor", fullgraph=False, dynamic=None, options=None):
        self.root = root
        self.is_module = isinstance(root, Module)
        self.fn = type(root).forward if self.is_module else root
        # The class's forward (an instance attribute may stand for it: Module.compile's).
        signature = inspect.signature(self.fn.__get__(root) if self.is_module else root)
        self.signature = signature
        self.n_params = len(signature.parameters)
        self.backend_argument = backend
        self.backend = backends.lookup(backend)
        self.fullgraph = fullgraph
        self.dynamic = dynamic is True
        self.options = options
        self.graphs = {}
        self.graph_modules = []
        self.joints = []
        self.guarded = []
        self.whole_steps = []
        self.breaks = []
        self.compile_times = []
        self._warned_limit = False
        self._watched = self._watched_values()

    # -- guards ----------------------------------------------------------------------------

    def _watched_values(self):
        """The module attributes and global/closure values the guards read (see module doc)."""
        attributes, namespaces = [], list(_plain_globals(self.fn))
        modules = self.root.modules() if self.is_module else \
            [m for top in referenced_modules(self.fn).values() for m in top.modules()]
        for module in modules:
            for name, value in vars(module).items():
                if isinstance(value, _PLAIN) and not name.startswith("__"):
                    attributes.append((module, name))
            forward = type(module).forward
            if not type(module).__module__.startswith("ember_nn"):  # traced through: its globals count
                namespaces += _plain_globals(forward)
        return attributes, namespaces

    def guard_key(self, args):
        """The key of a call with positional `args` (all parameters bound)."""
        key = [ember_autograd.is_grad_enabled()]
        dynamic = self.dynamic
        for a in args:
            if isinstance(a, Tensor):
                key.append((None if dynamic else tuple(a.shape), a.dtype, a.device, a.requires_grad))
            else:
                key.append((type(a), a))
        attributes, namespaces = self._watched
        if attributes:
            key.append(tuple(vars(m).get(name) for m, name in attributes))
        if namespaces:
            key.append(tuple(ns.cell_contents if name is None else ns.get(name) for ns, name in namespaces))
        return tuple(key)

    # -- calls -----------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != self.n_params:
            try:
                args = tuple(bind_arguments(self.signature, args, kwargs).values())
            except Unsupported as error:
                return self._eager_break(error, args, kwargs)
        try:
            key = self.guard_key(args)
            entry = self.graphs.get(key)
        except TypeError:  # an unhashable argument (a list of tensors, ...)
            return self._eager_break(Unsupported("an argument that is neither a tensor nor a plain hashable "
                                                 "value is not captured"), args, {})
        if entry is None:
            entry = self._compile(key, args)
        return entry(args)

    def _run_eagerly(self, args):
        return self.root(*args)

    def _eager_break(self, error, args, kwargs):
        if self.fullgraph:
            raise error
        self.breaks.append(BreakReason(str(error)))
        return self.root(*args, **kwargs)

    def _guarded_traces(self, args, topics):
        """The entry replaying a key's calls from guarded traces (`guarded`)."""
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        modules = list(self.root.modules()) if self.is_module else \
            [m for top in referenced_modules(self.fn).values() for m in top.modules()]
        constants = [(tensors, name) for m in modules for tensors in (m._parameters, m._buffers)
                     for name, t in tensors.items() if t is not None]
        hook_tables = [getattr(m, attr) for m in modules for attr in _HOOK_TABLES if hasattr(m, attr)]

        def refused(reason):
            self.breaks.append(BreakReason(f"not replayed from guarded traces: {reason}"))
            trace_log.emit(topics, "graph_breaks", "graph break: the call runs eagerly", reason)

        return GuardedTraces(self._run_eagerly, positions, constants, hook_tables, refused)

    def _whole_step(self, args, topics):
        """The entry replaying a training step's calls as recorded programs (`whole_step`)."""
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        modules = list(self.root.modules()) if self.is_module else \
            [m for top in referenced_modules(self.fn).values() for m in top.modules()]
        hook_tables = [getattr(m, attr) for m in modules for attr in _HOOK_TABLES if hasattr(m, attr)]

        def refused(reason):
            self.breaks.append(BreakReason(f"a training step not replayed as a whole: {reason}"))
            trace_log.emit(topics, "graph_breaks", "graph break: the call runs eagerly", reason)

        optimizers = [] if self.is_module else find_optimizers(self.fn)
        tensors = [] if self.is_module else find_tensors(self.fn)
        return WholeStep(self._run_eagerly, positions, modules, optimizers, hook_tables, refused, tensors)

    def _compile(self, key, args):
        topics = trace_log.enabled_topics(self.options)
        if len(self.graphs) >= config.limit():
            if not self._warned_limit:
                self._warned_limit = True
                warnings.warn(f"ember_compile hit config.cache_size_limit ({config.limit()}) compiling "
                              f"{getattr(self.fn, '__qualname__', self.fn)}: new guard sets run eagerly. "
                              f"Last change: {key}", RuntimeWarning, stacklevel=3)
            return self._run_eagerly
        if self.graphs:
            trace_log.emit(topics, "recompiles", f"recompiling {getattr(self.fn, '__qualname__', '')}",
                           f"guards failed; new key {key}")
        start = time.perf_counter()
        arguments = dict(zip(self.signature.parameters, args))
        try:
            gm = capture(self.root, arguments)
        except Unsupported as error:
            if self.fullgraph:
                raise
            if _reads_a_tensor_value(error) and config.guarded_traces:
                # Each check of the recorded traces is a break (`explain` lists them).
                trace_log.emit(topics, "graph_breaks", "graph break: the call is replayed from guarded traces",
                               str(error))
                entry = self.graphs[key] = self._guarded_traces(args, topics)
                self.guarded.append(entry)
                return entry
            self.breaks.append(BreakReason(str(error)))
            if _is_training_step(error) and config.whole_step:
                trace_log.emit(topics, "graph_breaks", "graph break: the call is replayed as a whole step",
                               str(error))
                entry = self.graphs[key] = self._whole_step(args, topics)
                self.whole_steps.append(entry)
                return entry
            trace_log.emit(topics, "graph_breaks", "graph break: the call runs eagerly", str(error))
            self.graphs[key] = self._run_eagerly
            return self._run_eagerly
        trace_log.emit(topics, "graph", f"captured graph of {getattr(self.fn, '__qualname__', '')}",
                       gm.code.strip())
        positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        example_inputs = [args[i] for i in positions]
        self.graph_modules.append(gm)
        compiled = self.backend(gm, example_inputs, log_topics=topics)
        self.compile_times.append(time.perf_counter() - start)
        # Under grad mode (a guard), training calls run the ahead-of-time backward.
        lower = key[0] and config.ahead_of_time_backward and isinstance(self.backend_argument, str) and \
            self.backend_argument in backends.JOINT and not switches_grad_mode(gm.graph)
        joint = JointCompiled(gm, compiled, dynamic=self.dynamic) if lower else None
        self.joints.append(joint)
        if joint is not None:
            def entry(call_args):
                tensors = [call_args[i] for i in positions]
                result = joint(tensors)
                return compiled(*tensors) if result is None else result
        elif len(positions) == len(args):
            def entry(call_args):
                return compiled(*call_args)
        else:
            def entry(call_args):
                return compiled(*[call_args[i] for i in positions])
        self.graphs[key] = entry
        return entry

    def __reduce__(self):
        # Graphs hold generated code and kernels: a copy compiles afresh on its first call.
        return (CompiledFunction, (self.root,), {"backend_argument": self.backend_argument,
                                                 "fullgraph": self.fullgraph, "dynamic": self.dynamic,
                                                 "options": self.options})

    def __setstate__(self, state):
        self.__init__(self.root, backend=state["backend_argument"], fullgraph=state["fullgraph"],
                      dynamic=state["dynamic"] or None, options=state["options"])

    def reset(self):
        """Drop every compiled graph (``torch.compiler.reset``)."""
        self.graphs.clear()
        self.graph_modules.clear()
        self.joints.clear()
        self.guarded.clear()
        self.whole_steps.clear()
        self.breaks.clear()
        self._warned_limit = False
        self._watched = self._watched_values()
