"""einsum and tensordot, composed of views, sums and batched matmul (so BLAS does the
arithmetic and autograd differentiates through the pieces).

einsum contracts its operands left to right: repeated labels inside one operand become
a diagonal, labels no one needs any more are summed away early, and each pair is laid
out as (batch, rows, contracted) @ (batch, contracted, cols) for one `matmul`.
"""
import math

from .._dispatch import op
from .._tensor import Tensor, wrap_dim
from . import views

__all__ = ["einsum", "tensordot"]

_ELLIPSIS_BASE = 0x2460  # labels for the dims under "..." (sort before letters: see _implicit_output)


def _parse(equation, operands):
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    ellipsis_ndim = 0
    labels = []
    for i, (term, t) in enumerate(zip(terms, operands)):
        for ch in term.replace("...", ""):
            if not ch.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index {equation.index(ch)} in the "
                                   f"equation string, subscripts must be in [a-zA-Z]")
        named = len(term.replace("...", ""))
        if "..." in term:
            n = t.dim() - named
            if n < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) is more than the "
                                   f"number of dimensions ({t.dim()}) for operand {i}")
            ellipsis_ndim = max(ellipsis_ndim, n)
            head, _, tail = term.partition("...")
            # Ellipsis dims align from the right, like broadcasting.
            labels.append(list(head) + [chr(_ELLIPSIS_BASE + 32 - n + k) for k in range(n)] + list(tail))
        else:
            if named != t.dim():
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({named}) does not match "
                                   f"the number of dimensions ({t.dim()}) for operand {i} and no ellipsis was given")
            labels.append(list(term))
    ellipsis_labels = [chr(_ELLIPSIS_BASE + 32 - ellipsis_ndim + k) for k in range(ellipsis_ndim)]
    if arrow:
        head, has_ellipsis, tail = rhs.partition("...")
        output = list(head) + (ellipsis_labels if has_ellipsis else []) + list(tail)
        for ch in head + tail:
            if not ch.isalpha():
                raise RuntimeError("einsum(): invalid subscript given in the output, subscripts must be in [a-zA-Z]")
            if not any(ch in lab for lab in labels):
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the equation for any "
                                   "input operand")
            if output.count(ch) > 1:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in the output")
    else:
        output = _implicit_output(labels, ellipsis_labels)
    return labels, output


def _implicit_output(labels, ellipsis_labels):
    # Without "->": the ellipsis dims, then every letter used exactly once, alphabetically.
    counts = {}
    for lab in labels:
        for ch in lab:
            counts[ch] = counts.get(ch, 0) + 1
    letters = sorted(ch for ch, n in counts.items() if n == 1 and ch not in ellipsis_labels)
    return ellipsis_labels + letters


def _check_sizes(labels, operands):
    sizes = {}
    for i, (lab, t) in enumerate(zip(labels, operands)):
        for ch, n in zip(lab, t.shape):
            seen = sizes.get(ch, 1)
            if n != 1 and seen != 1 and n != seen:
                name = ch if ch.isalpha() else "..."
                raise RuntimeError(f"einsum(): subscript {name} has size {n} for operand {i} which does not "
                                   f"broadcast with previously seen size {seen}")
            if n != 1:
                sizes[ch] = n
    return sizes


def _take_diagonals(t, lab):
    """Turn repeated labels of one operand into the diagonal over those dims."""
    lab = list(lab)
    while len(set(lab)) != len(lab):
        ch = next(c for c in lab if lab.count(c) > 1)
        i = lab.index(ch)
        j = lab.index(ch, i + 1)
        t = views.diagonal(t, 0, i, j)
        lab = [c for k, c in enumerate(lab) if k not in (i, j)] + [ch]
    return t, lab


def _sum_away(t, lab, keep):
    dims = [i for i, ch in enumerate(lab) if ch not in keep]
    if not dims:
        return t, lab
    return t.sum(dims), [ch for ch in lab if ch in keep]


def _contract(a, la, b, lb, keep, sizes):
    """Contract two operands over their shared labels that are not in `keep`."""
    batch = [ch for ch in la if ch in lb and ch in keep]
    summed = [ch for ch in la if ch in lb and ch not in keep]
    rows = [ch for ch in la if ch not in lb]
    cols = [ch for ch in lb if ch not in la]

    def layout(t, lab, order):
        t = views.permute(t, [lab.index(ch) for ch in order])
        return views.expand(t, [sizes.get(ch, 1) for ch in order])

    def prod(chs):
        n = 1
        for ch in chs:
            n *= sizes.get(ch, 1)
        return n

    a = layout(a, la, batch + rows + summed).reshape(prod(batch), prod(rows), prod(summed))
    b = layout(b, lb, batch + summed + cols).reshape(prod(batch), prod(summed), prod(cols))
    from .linalg import matmul
    result = matmul(a, b).reshape([sizes.get(ch, 1) for ch in batch + rows + cols])
    return result, batch + rows + cols


@op()
def einsum(equation, *operands):
    """Sum of products over the labels of `equation` (NumPy's einsum, with "..." and broadcasting).

    >>> import ember_tensor as torch
    >>> torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 4)).tolist()[0]
    [3.0, 3.0, 3.0, 3.0]
    """
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = tuple(operands[0])
    labels, output = _parse(equation, operands)
    sizes = _check_sizes(labels, operands)
    work = []
    for t, lab in zip(operands, labels):
        work.append(_take_diagonals(t, lab))
    t, lab = work[0]
    for i in range(1, len(work)):
        # Labels still needed after this pair: the output's and those of later operands.
        later = set(output)
        for _, other in work[i + 1:]:
            later.update(other)
        u, lu = work[i]
        t, lab = _sum_away(t, lab, later | set(lu))
        u, lu = _sum_away(u, lu, later | set(lab))
        t, lab = _contract(t, lab, u, lu, later, sizes)
    t, lab = _sum_away(t, lab, set(output))
    t = views.permute(t, [lab.index(ch) for ch in output])
    return views.expand(t, [sizes.get(ch, 1) for ch in output]) if output else t


@op()
def tensordot(a, b, dims=2, out=None):
    """Contract the last `dims` dims of `a` with the first of `b`, or the listed dim pairs."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        dims_a = list(range(a.dim() - dims, a.dim()))
        dims_b = list(range(dims))
    else:
        dims_a, dims_b = dims
        dims_a = [dims_a] if isinstance(dims_a, int) else list(dims_a)
        dims_b = [dims_b] if isinstance(dims_b, int) else list(dims_b)
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    dims_a = [wrap_dim(d, a.dim()) for d in dims_a]
    dims_b = [wrap_dim(d, b.dim()) for d in dims_b]
    for da, db in zip(dims_a, dims_b):
        if a.shape[da] != b.shape[db]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[da]} in dim {da} "
                               f"and second has size {b.shape[db]} in dim {db}")
    free_a = [d for d in range(a.dim()) if d not in dims_a]
    free_b = [d for d in range(b.dim()) if d not in dims_b]
    k = 1
    for d in dims_a:
        k *= a.shape[d]
    # Explicit sizes, not -1: with k = 0 (empty contracted dims) -1 is ambiguous, and
    # PyTorch's answer is a sum over nothing, zeros of the free dims' shape.
    rows = math.prod(a.shape[d] for d in free_a)
    cols = math.prod(b.shape[d] for d in free_b)
    left = views.permute(a, free_a + dims_a).reshape(rows, k)
    right = views.permute(b, dims_b + free_b).reshape(k, cols)
    from .linalg import matmul
    result = matmul(left, right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])
    if out is not None:
        from .elementwise import copy_to_out
        return copy_to_out(result, out)
    return result
