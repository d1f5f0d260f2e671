"""Forward-mode automatic differentiation (PyTorch's ``torch.autograd.forward_ad``).

A dual tensor is an ordinary tensor that carries its tangent for the open dual level.
While a level is open, a dispatcher wrapper watches every op call: when an argument
carries a tangent, the op runs on the primals as usual and each floating output gets the
op's Jacobian-vector product as its tangent.

The JVP of one op comes from reverse mode applied twice, so every op with a derivative
rule supports forward AD with no rule of its own: for ``out = f(x)`` and a cotangent
``u``, ``g(u) = J^T u`` is linear in ``u``, and the gradient of ``<g(u), v>`` with
respect to ``u`` is ``J v``. View ops (and indexing) instead apply the op to the tangent
itself, so the tangent of a view is the matching view of its base's tangent and an
in-place op through the view updates the base's tangent, as in PyTorch.

>>> import ember_tensor as torch
>>> x, v = torch.tensor([1., 2.]), torch.tensor([1., 0.])
>>> with dual_level():
...     y = make_dual(x, v) ** 2
...     unpack_dual(y).tangent
tensor([2., 0.])
"""
import threading
import weakref
from typing import NamedTuple

from ember_tensor import Tensor, register_wrapper, unregister_wrapper

from . import _grad_mode
from ._grad_mode import _DecoratorContextManager
from ._tensor_api import grad

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

# The open level (-1: none). As in PyTorch only one level may be open at a time.
_current_level = -1
# Each opened level gets a fresh token; a tangent is live only while the token it was
# stored with is the current one, so closing a level drops every tangent at once.
_token = None
# The dual tensors of the open level, to drop their tangents' memory when it closes.
_duals = []
# Set while the wrapper computes a JVP: the op calls it makes itself are not seen again.
_inside = threading.local()

# The attribute of a dual tensor holding ``(token, tangent)``.
_ATTR = "_fw_dual"
# View ops whose tangent is the same op applied to the input's tangent. `detach` is a
# view that drops the tangent, as PyTorch's does.
_VIEW_LIKE_EXTRA = {"getitem"}
_NO_TANGENT = {"detach", "detach_"}


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the primal (a view without tangent) and the tangent."""

    primal: Tensor
    tangent: Tensor | None


def _tangent_of(t):
    entry = t.__dict__.get(_ATTR)
    if entry is None or entry[0] is not _token:
        return None
    return entry[1]


def _set_tangent(t, tangent):
    t.__dict__[_ATTR] = (_token, tangent)
    _duals.append(weakref.ref(t))


def enter_dual_level():
    """Enter a new forward grad level; returns it (always 0: levels do not nest).

    The level becomes the default of `make_dual` and `unpack_dual`.
    """
    global _current_level, _token
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level = 0
    _token = object()
    _inside.active = False
    register_wrapper(_forward_ad_wrapper, outermost=True)
    return _current_level


def exit_dual_level(*, level=None):
    """Exit the forward grad level `level` (the open one by default), deleting every
    tangent associated with it."""
    global _current_level, _token
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if level != _current_level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one "
            "that was created. This is not supported.")
    unregister_wrapper(_forward_ad_wrapper)
    for ref in _duals:
        t = ref()
        if t is not None:
            t.__dict__.pop(_ATTR, None)
    _duals.clear()
    _token = None
    _current_level = level - 1


def make_dual(tensor, tangent, *, level=None):
    """Associate `tensor` with its `tangent`, making a dual tensor for forward AD.

    The result is a new tensor aliasing `tensor` (and backward differentiable) with
    `tangent` attached as-is; `unpack_dual` recovers it.

    Args:
        tensor: the primal, a floating point or complex tensor.
        tangent: the direction, a floating point or complex tensor of the same size.
        level: the dual level (the open one by default).
    """
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level "
            "exists, make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    if level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    if _tangent_of(tensor) is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient "
            f"at the same level {level} is not supported.")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    with _quiet():
        dual = tensor.view_as(tensor)
    _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """Unpack a dual tensor into ``(primal, tangent)``.

    The primal is a view of `tensor` carrying no tangent; the tangent is the one
    attached (None for a tensor that is not dual, or outside any level).
    """
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if level != _current_level:
        raise RuntimeError("Invalid level given to _fw_primal")
    tangent = _tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _quiet():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


class dual_level(_DecoratorContextManager):  # noqa: N801 - PyTorch's name
    """Context manager (and decorator) opening a forward AD level for its block.

    On exit every tangent of the level is deleted. Levels do not nest; for higher-order
    forward derivatives use ``torch.func.jvp``.
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


class _quiet:
    """Op calls inside are not seen by the forward AD wrapper."""

    def __enter__(self):
        self.prev = getattr(_inside, "active", False)
        _inside.active = True

    def __exit__(self, *exc):
        _inside.active = self.prev


def _forward_ad_wrapper(op, args, kwargs, redispatch):
    """The dispatcher wrapper of an open level: adds tangents to the outputs of op calls
    that have a dual argument."""
    if getattr(_inside, "active", False) or not _has_tangent(args, kwargs):
        return redispatch(op, args, kwargs)
    with _quiet():
        if op.name in _NO_TANGENT:
            return redispatch(op, args, kwargs)
        if (op.view or op.name in _VIEW_LIKE_EXTRA) and _only_first_is_dual(args, kwargs):
            out = redispatch(op, args, kwargs)
            tangent = _tangent_of(args[0])
            with _grad_mode.no_grad():
                tangents = op(tangent, *args[1:], **kwargs)
            _attach(out, tangents)
            return out
        # The JVP needs the inputs' values before an in-place op overwrites them.
        tangents = _jvp(op, args, kwargs)
        out = redispatch(op, args, kwargs)
        if op.inplace:
            old = _tangent_of(args[0])
            if tangents is None:
                args[0].__dict__.pop(_ATTR, None)
            elif old is not None and old.shape == tangents.shape:
                # In place, so views sharing the tangent see the update, as in PyTorch.
                with _grad_mode.no_grad():
                    old.copy_(tangents)
            else:
                _set_inplace_tangent(args[0], tangents)
            return out
        _attach(out, tangents)
        return out


def _set_inplace_tangent(target, tangent):
    """Give `target`, written in place and carrying no tangent yet, its tangent; a view
    gets a view of its base's tangent (zeros where the base has none), so the base is
    dual afterwards as in PyTorch."""
    base = target._view_base
    if base is None or not base.is_contiguous():
        _set_tangent(target, tangent)
        return
    base_tangent = _tangent_of(base)
    if base_tangent is None:
        base_tangent = base.detach().new_zeros(base.shape, dtype=tangent.dtype)
        _set_tangent(base, base_tangent)
    elif not base_tangent.is_contiguous():
        _set_tangent(target, tangent)
        return
    view = base_tangent.as_strided(
        target.shape, target.stride(), target.storage_offset() - base.storage_offset())
    with _grad_mode.no_grad():
        view.copy_(tangent)
    _set_tangent(target, view)


def _has_tangent(args, kwargs):
    for a in args:
        if isinstance(a, Tensor):
            if _tangent_of(a) is not None:
                return True
        elif isinstance(a, (list, tuple)):
            if any(isinstance(x, Tensor) and _tangent_of(x) is not None for x in a):
                return True
    return any(isinstance(a, Tensor) and _tangent_of(a) is not None for a in kwargs.values())


def _only_first_is_dual(args, kwargs):
    return (args and isinstance(args[0], Tensor) and _tangent_of(args[0]) is not None
            and not _has_tangent(args[1:], kwargs))


def _attach(out, tangents):
    if isinstance(out, Tensor):
        if tangents is not None and _is_differentiable(out):
            _set_tangent(out, tangents)
        return
    if isinstance(out, (list, tuple)) and tangents is not None:
        for o, t in zip(out, tangents):
            if isinstance(o, Tensor) and t is not None and _is_differentiable(o):
                _set_tangent(o, t)


def _is_differentiable(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def _jvp(op, args, kwargs):
    """The tangents of op's outputs (a tensor, a list matching a sequence output, or None)
    by differentiating the op's vector-Jacobian product with respect to its cotangent."""
    leaves, directions = [], []

    def detached(a):
        if not isinstance(a, Tensor):
            return a
        tangent = _tangent_of(a)
        d = a.detach()
        if tangent is None or not _is_differentiable(a):
            return d
        d.requires_grad_(True)
        leaves.append(d)
        directions.append(tangent)
        # An in-place op may not write into a leaf that requires grad: give it a copy.
        return d.clone() if op.inplace and a is args[0] else d

    def walk(a):
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            return type(a)(detached(x) for x in a)
        return detached(a)

    with _grad_mode.enable_grad():
        call_args = [walk(a) for a in args]
        if op.inplace and isinstance(args[0], Tensor) and not call_args[0].requires_grad:
            call_args[0] = call_args[0].clone()
        call_kwargs = {k: walk(v) for k, v in kwargs.items()}
        out = op(*call_args, **call_kwargs)
        if op.inplace:
            out = call_args[0]
        single = isinstance(out, Tensor)
        outs = [out] if single else list(out) if isinstance(out, (list, tuple)) else []
        # Outputs reached from a dual input: the others get no tangent.
        wanted = [i for i, o in enumerate(outs)
                  if isinstance(o, Tensor) and o.requires_grad and _is_differentiable(o)]
        if not wanted:
            return None
        cotangents = [outs[i].detach().new_zeros(outs[i].shape).requires_grad_(True) for i in wanted]
        vjps = grad([outs[i] for i in wanted], leaves, cotangents, create_graph=True, allow_unused=True)
        used = [(g, v) for g, v in zip(vjps, directions) if g is not None and g.requires_grad]
        if used:
            jvps = grad([g for g, _ in used], cotangents, [v.to(g.dtype) for g, v in used],
                        allow_unused=True)
        else:
            jvps = [None] * len(wanted)
    result = [None] * len(outs)
    for i, j in zip(wanted, jvps):
        if j is None:
            result[i] = outs[i].detach().new_zeros(outs[i].shape)
        elif any(j._storage is v._storage for v in directions):
            # The JVP of an identity-like op (clone, ...) is the input's tangent itself;
            # an output must own its tangent, or writing one in place would change the other.
            result[i] = j.detach().clone()
        else:
            result[i] = j.detach()
    return result[0] if single else result
