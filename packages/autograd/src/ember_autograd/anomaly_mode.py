"""Anomaly detection: remember where each node was created, and on a failure in backward
(or a NaN gradient, with ``check_nan``) say which forward op it came from."""
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "set_anomaly_enabled"]

_enabled = False
_check_nan = True


def is_anomaly_enabled():
    """Whether anomaly detection is on."""
    return _enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection also raises on NaN gradients."""
    return _check_nan


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off for good (``torch.set_anomaly_enabled``)."""
    _set(enabled, check_nan)


class detect_anomaly:
    """Context manager (and decorator) turning anomaly detection on for a block.

    >>> import ember_tensor as torch
    >>> with detect_anomaly():
    ...     x = torch.zeros(1, requires_grad=True)
    ...     (x / x).sum().backward()  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    RuntimeError: Function 'DivBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should "
                      "only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev = (_enabled, _check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc):
        _set(*self.prev)

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapped


class set_detect_anomaly:
    """Turn anomaly detection on or off: as a plain call or a context manager."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_enabled, _check_nan)
        _set(mode, check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(*self.prev)


def _set(mode, check_nan):
    global _enabled, _check_nan
    _enabled, _check_nan = bool(mode), bool(check_nan)


def record_trace(node):
    """Keep the forward stack of `node` (called at record time while anomaly mode is on)."""
    node._anomaly_trace = "".join(traceback.format_stack()[:-3])


def checked_apply(node, grads):
    """Apply `node`, naming the forward op that created it when it fails or returns NaN."""
    try:
        outputs = node.apply(grads)
    except Exception:
        _warn_trace(node)
        raise
    if _check_nan:
        for i, g in enumerate(outputs):
            if g is not None and bool(g.isnan().any()):
                _warn_trace(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return outputs


def _warn_trace(node):
    trace = node._anomaly_trace
    if trace:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                      f"{trace}", stacklevel=3)
