"""``torch.vmap``: map a function over a batch dimension of its inputs.

ember has no batched tensors: vmap runs the function once per sample (inputs ``select``-ed
at their ``in_dims``) and stacks the outputs at their ``out_dims``. The values, the
structure rules and the errors are PyTorch's; the cost is a Python loop, not one batched
kernel. Selecting and stacking are differentiable ops, so gradients flow through vmap and
any transform composes with it (``vmap(grad(f))``, ``vmap(vmap(f))``, ``grad(vmap(f))``).
"""
import functools

import ember_tensor as E
from ember_tensor import Tensor

from ._pytree import broadcast_to_and_flatten, tree_flatten, tree_unflatten
from ._randomness import check_randomness, randomness_guard

__all__ = ["vmap"]


def _name(func):
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def _flat_in_dims(func, in_dims, args):
    """(batch size, one in_dim per leaf of args, leaves, spec), with PyTorch's errors."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying "
                         "to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_in_dims = broadcast_to_and_flatten(in_dims, spec)
    if flat_in_dims is None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
                         f"structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if in_dim is None:
            continue
        if not isinstance(in_dim, int) or isinstance(in_dim, bool):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                             "in_dim must be either an integer dimension or None.")
        if not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for an input but "
                             f"the input is of type {type(arg)}. We cannot vmap over non-Tensor arguments, please use "
                             "None as the respective in_dim")
        if not -arg.dim() <= in_dim < arg.dim():
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={in_dim} for some input, "
                             f"but that input is a Tensor of dimensionality {arg.dim()} so expected in_dim to satisfy "
                             f"-{arg.dim()} <= in_dim < {arg.dim()}.")
        flat_in_dims[i] = in_dim % arg.dim()
    sizes = [arg.size(d) for arg, d in zip(flat_args, flat_in_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(size != sizes[0] for size in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat_in_dims, flat_args, spec


def _check_out_dims(func, out_dims):
    for out_dim in tree_flatten(out_dims)[0]:
        if out_dim is not None and (not isinstance(out_dim, int) or isinstance(out_dim, bool)):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                             "python collection of ints representing where in the outputs the vmapped dimension "
                             "should appear.")


def _flat_out_dims(func, out_dims, output, spec):
    """One out_dim per leaf of the output, with PyTorch's rules (a lone tensor takes an int,
    None or a 1-tuple)."""
    if isinstance(output, Tensor):
        if out_dims is None or isinstance(out_dims, int):
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        flat = None
    else:
        flat = broadcast_to_and_flatten(out_dims, spec)
    if flat is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
                         f"the structure of `outputs`. out_dims has structure {tree_flatten(out_dims)[1]} but outputs "
                         f"has structure {spec}.")
    return flat


def _is_batched(samples):
    """Whether a leaf differs across samples (PyTorch: the output is a BatchedTensor). A loop
    cannot see batching, so a tensor counts as unbatched when every sample returned the same
    object or equal values."""
    first = samples[0]
    if not isinstance(first, Tensor):
        return False
    return any(s is not first and not (isinstance(s, Tensor) and s.shape == first.shape and E.equal(s, first))
               for s in samples[1:])


def _stack_leaf(func, samples, out_dim):
    name = _name(func)
    if out_dim is None:
        if _is_batched(samples):
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
        return samples[0]
    if not isinstance(samples[0], Tensor):
        raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(samples[0])}. "
                         "Did you mean to set out_dims= to None for output?")
    return E.stack(samples, dim=out_dim)


def _empty_batch(func, flat_in_dims, flat_args, spec, out_dims, kwargs):
    """A batch of size 0: run `func` once on zeros shaped as one sample to learn the output's
    structure, then return empty stacks of that shape."""
    sample = [arg if d is None else arg.new_zeros(tuple(arg.shape[:d]) + tuple(arg.shape[d + 1:]))
              for arg, d in zip(flat_args, flat_in_dims)]
    output = func(*tree_unflatten(sample, spec), **kwargs)
    flat_outputs, output_spec = tree_flatten(output)
    leaves = []
    for value, out_dim in zip(flat_outputs, _flat_out_dims(func, out_dims, output, output_spec)):
        if out_dim is None:
            leaves.append(value)
            continue
        shape = list(_stack_leaf(func, [value], out_dim).shape)  # checks it is a tensor and out_dim fits
        shape[out_dim] = 0
        leaves.append(value.new_empty(shape))
    return tree_unflatten(leaves, output_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """`func` mapped over a dimension of its inputs: ``vmap(f)(x)[i] == f(x[i])``.

    Args:
        in_dims: the mapped dimension of each positional input: an int for all, or a tuple
            shaped as the inputs (nested tuples/lists/dicts for pytrees), with None for an
            input passed whole to every call. Keyword arguments are passed whole.
        out_dims: where the mapped dimension goes in each output (int, None, or a pytree).
        randomness: 'error' (a random op inside raises), 'different' or 'same'.
        chunk_size: accepted for PyTorch's signature; samples already run one at a time.

    The result is PyTorch's; the cost is one call of `func` per sample (ember has no
    batched kernels for vmap to use).

    >>> import ember_tensor as torch
    >>> vmap(torch.dot)(torch.ones(3, 2), torch.ones(3, 2)).tolist()
    [2.0, 2.0, 2.0]
    """
    check_randomness(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    _check_out_dims(func, out_dims)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        batch_size, flat_in_dims, flat_args, spec = _flat_in_dims(func, in_dims, args)
        if batch_size == 0:
            return _empty_batch(func, flat_in_dims, flat_args, spec, out_dims, kwargs)
        same_state = E.get_rng_state() if randomness == "same" else None
        outputs = []
        for i in range(batch_size):
            sample = [arg if d is None else arg.select(d, i) for arg, d in zip(flat_args, flat_in_dims)]
            if same_state is not None:
                E.set_rng_state(same_state)  # every sample draws what the first one drew
            with randomness_guard(randomness):
                outputs.append(func(*tree_unflatten(sample, spec), **kwargs))
        flat_first, output_spec = tree_flatten(outputs[0])
        per_sample = [flat_first] + [tree_flatten(out)[0] for out in outputs[1:]]
        flat_dims = _flat_out_dims(func, out_dims, outputs[0], output_spec)
        leaves = [_stack_leaf(func, [flat[j] for flat in per_sample], out_dim) for j, out_dim in enumerate(flat_dims)]
        return tree_unflatten(leaves, output_spec)

    return wrapper
