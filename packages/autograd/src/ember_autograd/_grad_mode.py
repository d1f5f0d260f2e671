"""Grad modes: whether ops are recorded for backward (thread-local, like PyTorch's).

`no_grad`, `enable_grad`, `set_grad_enabled` and `inference_mode` work as context
managers and as decorators; `set_grad_enabled(False)` also works as a plain call.
"""
import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]


class _State(threading.local):
    # Read on every op call by the recording wrapper: one attribute load.
    enabled = True
    inference = False


state = _State()


def is_grad_enabled():
    """Whether ops are currently recorded for backward.

    >>> is_grad_enabled()
    True
    """
    return state.enabled


def is_inference_mode_enabled():
    """Whether an `inference_mode` block is active."""
    return state.inference


class _DecoratorContextManager:
    """A context manager that can also decorate functions (and generator functions)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as error:  # forward throws into the generator
                        with self.clone():
                            response = gen.throw(error)
                    else:
                        with self.clone():
                            response = gen.send(request)
            return generator

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return decorated

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
    """Context manager and decorator that turns recording off.

    >>> import ember_tensor as torch
    >>> x = torch.ones(2, requires_grad=True)
    >>> with no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = False

    def __exit__(self, *exc):
        state.enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Context manager and decorator that turns recording on (inside `no_grad`, say)."""

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = True

    def __exit__(self, *exc):
        state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off: as a plain call, a context manager or a decorator.

    The plain call takes effect at once (PyTorch's behaviour); used with ``with``, the
    previous mode comes back at the end of the block.

    >>> _ = set_grad_enabled(False); is_grad_enabled()
    False
    >>> _ = set_grad_enabled(True); is_grad_enabled()
    True
    """

    def __init__(self, mode):
        self.prev = state.enabled
        self.mode = bool(mode)
        state.enabled = self.mode

    def __call__(self, func):
        # Used as a decorator, the mode applies only inside the function.
        state.enabled = self.prev
        return super().__call__(func)

    def __enter__(self):
        state.enabled = self.mode

    def __exit__(self, *exc):
        state.enabled = self.prev

    def clone(self):
        return type(self)(self.mode)

    def __repr__(self):
        return f"ember_autograd.set_grad_enabled(mode={self.mode})"


class inference_mode(_DecoratorContextManager):
    """Like `no_grad` (ember keeps no separate inference tensors).

    ``inference_mode(False)`` leaves grad mode as it is.
    """

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self):
        self.prev = (state.enabled, state.inference)
        if self.mode:
            state.enabled = False
            state.inference = True

    def __exit__(self, *exc):
        state.enabled, state.inference = self.prev

    def clone(self):
        return type(self)(self.mode)
