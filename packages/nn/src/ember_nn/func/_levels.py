"""What every differentiating transform of torch.func shares: fresh inputs to differentiate
with respect to, and the rule that decides which results stay attached to the outer graph.

ember has one autograd tape where PyTorch's functorch keeps one level per transform. A
transform gives each input it differentiates a private alias (a fresh leaf, or a view of
an input the outer graph tracks) and asks `autograd.grad` for those aliases only, so
nested transforms never confuse their perturbations. A result then stays attached to
the graph only where PyTorch's would still be tracked by an outer level: when grad mode
was on at the call and the result's graph reaches a leaf other than this call's private
ones (an input the caller differentiates, a parameter a closure holds, an outer
transform's alias). Everything else is detached, so ``grad(f)(x)`` on a plain ``x``
returns a tensor with no history, as PyTorch's does.
"""
from ember_tensor import Tensor

__all__ = ["make_differentiable", "private_leaves", "tracked_outside", "unwrap", "wrap_argnums",
           "slice_argnums", "replace_argnums"]


def make_differentiable(value):
    """A private alias of `value` that this transform differentiates with respect to."""
    if not isinstance(value, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(value)}")
    if value.requires_grad:
        return value.view_as(value)  # the outer graph keeps flowing through the alias
    return value.detach().requires_grad_(True)


def private_leaves(flat_inputs):
    """The ids of the fresh leaves among a transform's aliases (see make_differentiable)."""
    return {id(t) for t in flat_inputs if t.is_leaf}


def tracked_outside(tensors, private):
    """True when some tensor's graph reaches a leaf requiring grad that is not in `private`."""
    seen = set()
    stack = []
    for t in tensors:
        if not isinstance(t, Tensor) or not t.requires_grad:
            continue
        if t.grad_fn is None:
            if id(t) not in private:
                return True
            continue
        stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)  # a leaf's accumulator
        if variable is not None and id(variable) not in private:
            return True
        stack.extend(edge[0] for edge in node.next_functions)
    return False


def unwrap(value, private, grad_was_enabled):
    """`value` (a tensor or anything else) as the caller sees it: detached unless tracked outside."""
    if not isinstance(value, Tensor):
        return value
    if grad_was_enabled and tracked_outside([value], private):
        return value
    return value.detach()


def wrap_argnums(argnums, num_args):
    """`argnums` with negative positions resolved, and PyTorch's errors for bad ones."""
    def one(argnum):
        if not isinstance(argnum, int):
            raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
        if 0 <= argnum < num_args:
            return argnum
        if -num_args <= argnum < 0:
            return argnum + num_args
        raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")

    if isinstance(argnums, int):
        return one(argnums)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if len(argnums) == 0:
        raise RuntimeError("argnums must be non-empty")
    wrapped = tuple(one(a) for a in argnums)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return wrapped


def slice_argnums(args, argnums):
    """The arguments at `argnums` (already wrapped): one pytree for an int, a tuple for a tuple."""
    if isinstance(argnums, int):
        return args[argnums]
    return tuple(args[i] for i in argnums)


def replace_argnums(args, argnums, new):
    """`args` with the arguments at `argnums` replaced by `new` (shaped as slice_argnums gives)."""
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new
    else:
        for i, value in zip(argnums, new):
            args[i] = value
    return tuple(args)
