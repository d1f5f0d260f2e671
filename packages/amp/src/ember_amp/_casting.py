"""The autocast wrapper of the dispatcher, and the thread-local state it reads.

The wrapper sits outermost in the dispatcher's chain (above autograd's recording), so the
casts it makes are ordinary ``to`` calls that autograd records: a float32 weight cast to
bfloat16 for a matmul gets its gradient back in float32, and the matmul saves its inputs
in bfloat16 (half the memory of saved activations). It is registered only while some
thread has autocast enabled, so code that never enters a region pays nothing.

While an op runs, autocast is suspended for the ops it calls inside (PyTorch's
``ExcludeDispatchKeyGuard`` around a listed op, and no autocast kernel inside a PyTorch
kernel): a float32 op is not split into bfloat16 parts, and mv, which ember computes with
matmul, stays in its input dtype as PyTorch's mv kernel does. The exceptions are the ops
PyTorch decomposes into listed ones (``_policy.DECOMPOSED``: einsum, tensordot, ...).
"""
import threading
import weakref

import ember_tensor
from ember_tensor import Tensor
from ember_tensor.dispatch import register_wrapper, unregister_wrapper

from ._policy import BANNED, DECOMPOSED, FP32, FP32_APPEND_DTYPE, FP32_SET_OPT_DTYPE, LOWER, POLICIES, PROMOTE

__all__ = ["DEVICE_TYPES", "DEFAULT_DTYPES", "state", "set_enabled", "clear_cache", "autocast_wrapper"]

DEVICE_TYPES = ("cpu", "cuda")
DEFAULT_DTYPES = {"cpu": ember_tensor.bfloat16, "cuda": ember_tensor.float16}
_FLOAT32 = ember_tensor.float32
_FLOAT64 = ember_tensor.float64
# Ops whose dtype argument may come positionally: op name -> its index.
_POSITIONAL_DTYPE = {"softmax": 2, "log_softmax": 2, "norm": 5}


class _State(threading.local):
    """Autocast state of one thread, as PyTorch keeps it (thread-local)."""

    def __init__(self):
        self.enabled = dict.fromkeys(DEVICE_TYPES, False)
        self.dtype = dict(DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        self.active = ()        # the enabled device types: the wrapper's one fast check
        self.suspended = False  # inside an op: the ops it calls are its implementation


state = _State()
# The weight-cast cache: (id(fp32 leaf), dtype) -> (weakref to it, its lower-precision copy).
# Keyed by id with the weakref checked, since a dead tensor's id can be reused; and by dtype,
# so that a float16 region nested in a bfloat16 one does not get the bfloat16 copy.
_cache = {}
_lock = threading.Lock()
_enabled_count = 0  # (thread, device type) pairs enabled: the wrapper is registered while > 0


def set_enabled(device_type, enabled):
    """Turn autocast on or off for `device_type` in this thread."""
    global _enabled_count
    enabled = bool(enabled)
    if state.enabled[device_type] == enabled:
        return
    state.enabled[device_type] = enabled
    state.active = tuple(d for d in DEVICE_TYPES if state.enabled[d])
    with _lock:
        _enabled_count += 1 if enabled else -1
        if enabled and _enabled_count == 1:
            register_wrapper(autocast_wrapper, outermost=True)
        elif not enabled and _enabled_count == 0:
            unregister_wrapper(autocast_wrapper)


def clear_cache():
    """Drop the cached lower-precision copies of weights."""
    with _lock:
        _cache.clear()


def _first_tensor(args):
    for a in args:
        if isinstance(a, Tensor):
            return a
        if isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, Tensor):
                    return x
    return None


def autocast_wrapper(op, args, kwargs, redispatch):
    """The dispatcher wrapper: cast `op`'s inputs by the policy of their device type."""
    st = state
    if st.suspended or not st.active:
        return redispatch(op, args, kwargs)
    first = _first_tensor(args)
    if first is None:
        return redispatch(op, args, kwargs)
    device_type = first._device.type
    if not st.enabled.get(device_type, False):
        return redispatch(op, args, kwargs)
    name = op.name
    policy = POLICIES[device_type].get(name)
    if policy is not None and kwargs.get("out") is not None:
        policy = None  # PyTorch's out= overloads have no autocast kernel: the op runs as called
    if policy is None:
        banned = BANNED[device_type].get(name)
        if banned is not None:
            raise RuntimeError(banned)
        if name in DECOMPOSED:
            return redispatch(op, args, kwargs)
    else:
        args, kwargs = _apply(policy, name, device_type, st.dtype[device_type], first, args, kwargs)
    st.suspended = True
    try:
        return redispatch(op, args, kwargs)
    finally:
        st.suspended = False


def _eligible(t, device_type):
    return (isinstance(t, Tensor) and t._device.type == device_type and t._dtype.is_floating_point
            and t._dtype is not _FLOAT64)


def _apply(policy, name, device_type, lower, first, args, kwargs):
    if policy is LOWER or policy is FP32 or policy is PROMOTE:
        if policy is LOWER:
            to = lower
        elif policy is FP32:
            to = _FLOAT32
        else:
            to = _promote_type(lower, device_type, args, kwargs)
        return _cast_all(args, to, device_type, lower), _cast_all(kwargs, to, device_type, lower)
    # FP32_SET_OPT_DTYPE / FP32_APPEND_DTYPE: ask the op for a float32 result instead.
    position = _POSITIONAL_DTYPE.get(name)
    if kwargs.get("dtype") is not None or (position is not None and len(args) > position
                                           and args[position] is not None):
        return args, kwargs
    if policy is FP32_SET_OPT_DTYPE and not _eligible(first, device_type):
        return args, kwargs
    if policy is FP32_APPEND_DTYPE:
        out_type = _FLOAT32 if _eligible(first, device_type) else first._dtype
    else:
        out_type = _FLOAT32
    if position is not None and len(args) > position:  # dtype=None given positionally
        return (*args[:position], out_type, *args[position + 1:]), kwargs
    return args, {**kwargs, "dtype": out_type}


def _promote_type(lower, device_type, args, kwargs):
    """PyTorch's ``promote_type``: float32 if any eligible input is, else the lower type."""
    current = lower
    for t in _tensors(args, kwargs):
        if not _eligible(t, device_type):
            continue
        if t._dtype is _FLOAT32 or current is _FLOAT32:
            current = _FLOAT32
        elif t._dtype is not lower:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _tensors(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))


def _cast_all(values, to, device_type, lower):
    if isinstance(values, dict):
        return {k: _cast_all_one(v, to, device_type, lower) for k, v in values.items()}
    return tuple(_cast_all_one(v, to, device_type, lower) for v in values)


def _cast_all_one(value, to, device_type, lower):
    if isinstance(value, Tensor):
        return _cached_cast(value, to, device_type, lower)
    if isinstance(value, (list, tuple)) and any(isinstance(x, Tensor) for x in value):
        return type(value)(_cached_cast(x, to, device_type, lower) if isinstance(x, Tensor) else x
                           for x in value)
    return value


def _cached_cast(t, to, device_type, lower):
    """PyTorch's ``cached_cast``: `t` in dtype `to` if eligible; float32 weights (leaves that
    require grad, not views) cast to the lower type are cast once per autocast region."""
    if not _eligible(t, device_type) or t._dtype is to:
        return t
    if (to is lower and t._dtype is _FLOAT32 and t._requires_grad and t._grad_fn is None
            and t._view_base is None and state.cache_enabled):
        key = (id(t), to)
        hit = _cache.get(key)
        if hit is not None and hit[0]() is t:
            return hit[1]
        cast = t.to(to)
        with _lock:
            _cache[key] = (weakref.ref(t), cast)
        return cast
    return t.to(to)
