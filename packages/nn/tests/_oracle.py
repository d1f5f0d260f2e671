"""Run one functional call in ember and in PyTorch on the same float64 data and compare
outputs and input gradients (the optional PyTorch oracle of the functional tests)."""
import numpy as np

import ember_tensor as et


def to_ember(value, grad):
    if isinstance(value, np.ndarray):
        t = et.tensor(value)
        if grad and value.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], np.ndarray):
        return type(value)(to_ember(v, grad) for v in value)
    return value


def to_torch(torch, value, grad):
    if isinstance(value, np.ndarray):
        t = torch.tensor(value)
        if grad and value.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], np.ndarray):
        return type(value)(to_torch(torch, v, grad) for v in value)
    return value


def _leaves(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            yield from _leaves(v)
        elif hasattr(v, "requires_grad") and v.requires_grad:
            yield v


def _first(out):
    return out[0] if isinstance(out, tuple) else out


def compare(torch, ember_fn, torch_fn, args, kwargs=None, grad=True, atol=1e-7, seed_grad=0, constant=()):
    """Assert ember_fn(*args) == torch_fn(*args) and that their gradients agree (w.r.t.
    every float argument except the positions in `constant`)."""
    kwargs = kwargs or {}
    e_args = [to_ember(a, grad and i not in constant) for i, a in enumerate(args)]
    t_args = [to_torch(torch, a, grad and i not in constant) for i, a in enumerate(args)]
    # Keyword tensors (weights, pos_weight) are constants, as PyTorch requires.
    e_kwargs = {k: to_ember(v, False) for k, v in kwargs.items()}
    t_kwargs = {k: to_torch(torch, v, False) for k, v in kwargs.items()}
    e_out, t_out = ember_fn(*e_args, **e_kwargs), torch_fn(*t_args, **t_kwargs)
    if isinstance(t_out, tuple):
        for e, t in zip(e_out, t_out):
            np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-6)
    else:
        np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), atol=atol, rtol=1e-6)
    if not grad:
        return
    t_main = _first(t_out)
    if not t_main.requires_grad:
        return
    g = np.random.default_rng(seed_grad).standard_normal(tuple(t_main.shape))
    t_main.backward(torch.tensor(g, dtype=t_main.dtype))
    _first(e_out).backward(et.tensor(g, dtype=_first(e_out).dtype))
    for e, t in zip(_leaves(e_args), _leaves(t_args)):
        if t.grad is None:
            assert e.grad is None or not e.grad.numpy().any()
            continue
        if e.grad is None:
            assert not t.grad.numpy().any(), "ember computed no gradient where PyTorch has one"
            continue
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), atol=max(atol, 1e-6), rtol=1e-5)
