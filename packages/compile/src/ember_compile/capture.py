"""Graph capture: a module's ``forward`` or a function becomes an fx GraphModule.

ember-fx's symbolic tracer runs the program once on Proxies. Its non-tensor arguments are
fixed to the values of the call being compiled (``concrete_args``; the guards check them
on every later call), and its tensor arguments are the graph's inputs. What the tracer
cannot capture raises `Unsupported`, and the caller runs the call eagerly instead:

- Python control flow on a tensor's value (``if x.sum() > 0``): fx's ``TraceError``;
- an op that ran on real tensors while tracing and would not run again when the graph
  does — an in-place write (an optimizer step, ``p.add_``) or a random draw baked in as a
  constant — caught by a dispatcher wrapper registered only while capturing;
- a backward pass inside the program (``loss.backward()``, ``autograd.grad``): what follows
  it (an optimizer step reading ``.grad``) ran on the real tensors' gradients of the
  trace, not the graph's, as PyTorch's compiler breaks the graph there too;
- a custom ``autograd.Function`` applied to a Proxy: traced through, only its forward's
  ops would be recorded (under no_grad) and its backward lost;
- anything else the traced code raised on a Proxy (an unsupported call).

A function that calls modules it reads from its globals or closure (``model(x)`` in a
compiled step function) gets them as submodules of the graph's root, under those names,
so the graph calls the very same modules (their parameters train).

Grad mode inside the program (``with torch.no_grad():`` around some ops, ``enable_grad``,
``set_grad_enabled``) is part of the graph: the tracer notes the mode each node was
recorded under, and where it changes it records a `set_grad_mode` node (before the output
too, where the program ends in another mode than the last node's), so the graph's runs
compute and record exactly what an eager call would. Fusion and the ahead-of-time
backward leave such graphs alone (`switches_grad_mode`).
"""
import contextlib
import inspect

import ember_autograd
import ember_fx
from ember_fx import GraphModule, Tracer, has_side_effect
from ember_nn import Module
from ember_tensor import Tensor
from ember_tensor import dispatch

from .exc import Unsupported

__all__ = ["capture", "capturing", "referenced_modules", "bind_arguments", "set_grad_mode", "switches_grad_mode"]

_depth = [0]  # captures in progress


def capturing():
    """Whether a capture is running (``torch.compiler.is_compiling()``)."""
    return _depth[0] > 0

# Ops that draw random numbers (fx keeps them in graphs for the same reason).
_RANDOM_PREFIXES = ("rand", "bernoulli", "normal", "multinomial", "poisson", "dropout", "uniform_",
                    "exponential_", "geometric_", "cauchy_", "log_normal_", "random_")


def _refuse_hidden_effects(op, args, kwargs, redispatch):
    """A dispatcher wrapper, on while capturing, seeing only ops on real tensors (fx's own
    wrapper records those given a Proxy): ones whose effect the graph would lose."""
    if op.inplace or kwargs.get("out") is not None:
        raise Unsupported(f"in-place op {op.name!r} on a tensor that is not a graph input ran while capturing "
                          f"(e.g. an optimizer step or a write into a global tensor); its effect would not "
                          f"happen again when the graph runs")
    if op.name.startswith(_RANDOM_PREFIXES):
        raise Unsupported(f"random op {op.name!r} with no graph input ran while capturing; its result would be "
                          f"frozen into the graph as a constant")
    return redispatch(op, args, kwargs)


@contextlib.contextmanager
def _refusing_custom_functions():
    """While capturing: a custom ``autograd.Function`` applied to a Proxy breaks the graph
    (the whole call runs eagerly). Traced through, its forward would run under no_grad and
    only its ops would be recorded: the graph would lose its backward (a straight-through
    estimator's gradient, or any gradient at all)."""
    original = ember_autograd.Function.__dict__["apply"]

    def apply(cls, *args, **kwargs):
        if any(isinstance(a, ember_fx.Proxy) for a in (*args, *kwargs.values())):
            raise Unsupported(f"a custom autograd.Function ({cls.__name__}) is not captured: its backward "
                              "would be lost")
        return original.__func__(cls, *args, **kwargs)

    ember_autograd.Function.apply = classmethod(apply)
    try:
        yield
    finally:
        ember_autograd.Function.apply = original


_BACKWARD_CALLS = (ember_autograd.backward, ember_autograd.grad)


def _is_backward(kind, target):
    """Whether an fx node of `kind` and `target` is a backward pass."""
    return (kind == "call_method" and target == "backward") or (kind == "call_function" and target in _BACKWARD_CALLS)


def _refuse_backward_now():
    """Raise the break of a backward pass inside the compiled function."""
    raise Unsupported("a backward pass (loss.backward(), autograd.grad) inside the compiled function: what "
                      "follows it (an optimizer step) would see the gradients of the capture, not of "
                      "the graph's runs")


def _refuse_backward(graph):
    for node in graph.nodes:
        if _is_backward(node.op, node.target):
            _refuse_backward_now()


def referenced_modules(fn):
    """``{name: module}`` for the Modules that function `fn` reads from its globals or
    closure by name."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return {}
    found = {}
    for name in code.co_names:
        value = fn.__globals__.get(name)
        if isinstance(value, Module):
            found[name] = value
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, Module):
            found[name] = value
    return found


@has_side_effect
def set_grad_mode(mode):
    """A graph node: grad mode from here on, as the traced program had it (``no_grad``
    blocks and their ends)."""
    ember_autograd.set_grad_enabled(mode)  # the plain call: takes effect at once


def switches_grad_mode(graph):
    """Whether `graph` holds `set_grad_mode` nodes."""
    return any(node.op == "call_function" and node.target is set_grad_mode for node in graph.nodes)


class CaptureTracer(Tracer):
    """fx's Tracer, with a function's referenced modules installed on its root, recording
    the program's grad-mode changes as `set_grad_mode` nodes."""

    def __init__(self, modules):
        super().__init__()
        self._modules_of_function = modules
        self._graph_mode = ember_autograd.is_grad_enabled()

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """As fx's, after a `set_grad_mode` node where the grad mode differs from the mode
        the graph has at this point (at the output: the mode the program ends in, the
        call's own after a ``no_grad`` block, off after a plain ``set_grad_enabled(False)``)."""
        if _is_backward(kind, target):
            # At once: the Python code after it (an optimizer's step, its counters) must
            # not run on the capture's proxies, which would apply its plain effects twice.
            _refuse_backward_now()
        mode = ember_autograd.is_grad_enabled()
        if kind != "placeholder" and mode != self._graph_mode:
            self._graph_mode = mode
            super().create_node("call_function", set_grad_mode, (mode,), {})
        return super().create_node(kind, target, args, kwargs, name, type_expr)

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """As fx's, after installing the function's modules on the (fresh) root."""
        if not is_module:
            for name, module in self._modules_of_function.items():
                self.root.add_module(name, module)
        return super().create_args_for_root(root_fn, is_module, concrete_args)


def _drop_concrete_inputs(graph, names):
    """Remove the placeholders of concrete arguments and fx's checks of their values: the
    guards check them before the graph runs, and the graph then takes tensors only."""
    for node in list(graph.nodes):
        if node.op == "placeholder" and node.target in names:
            for user in list(node.users):
                for check in list(user.users):
                    graph.erase_node(check)
                graph.erase_node(user)
            graph.erase_node(node)


def capture(root, arguments):
    """Trace `root` (a Module or a function) for a call with `arguments`.

    Args:
        root: the Module (its ``forward``) or function.
        arguments: ``{parameter name: value}`` of the call, every parameter bound; the
            tensors become the graph's inputs, the other values are fixed.

    Returns:
        A GraphModule taking the call's tensors, in parameter order.

    Raises:
        Unsupported: what could not be captured (see the module docstring).
    """
    concrete = {name: value for name, value in arguments.items() if not isinstance(value, Tensor)}
    modules = {} if isinstance(root, Module) else referenced_modules(root)
    tracer = CaptureTracer(modules)
    dispatch.register_wrapper(_refuse_hidden_effects)
    _depth[0] += 1
    mode = ember_autograd.is_grad_enabled()
    try:
        with _refusing_custom_functions():
            graph = tracer.trace(root, concrete_args=concrete)
    except Unsupported:
        raise
    except ember_fx.TraceError as error:
        raise Unsupported(f"data-dependent control flow or iteration: {error}") from error
    except Exception as error:
        raise Unsupported(f"the tracer could not capture a call: {type(error).__name__}: {error}") from error
    finally:
        _depth[0] -= 1
        dispatch.unregister_wrapper(_refuse_hidden_effects)
        # A plain set_grad_enabled in the program ran on the proxies too: the graph's run
        # (its set_grad_mode nodes) applies it, from the call's mode.
        ember_autograd.set_grad_enabled(mode)
    _refuse_backward(graph)
    _drop_concrete_inputs(graph, set(concrete))
    name = type(root).__name__ if isinstance(root, Module) else getattr(root, "__name__", "function")
    return GraphModule(tracer.root, graph, name)


def bind_arguments(signature, args, kwargs):
    """``{name: value}`` of a call, defaults applied; raises Unsupported for ``*args`` or
    ``**kwargs`` parameters (their contents would be captured as one opaque value)."""
    for parameter in signature.parameters.values():
        if parameter.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise Unsupported(f"a function with *{parameter.name} or **{parameter.name} parameters is not captured")
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)
