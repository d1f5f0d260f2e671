"""The margin losses over vectors and classes (cosine embedding, triplet margin, multi-class
and multi-label margin), one dispatcher op each.

Composites of elementwise ops, reductions and index ops, differentiated through their
parts, and one operator each so that autocast's op lists can name them as PyTorch's do
(they run in float32 under autocast). `ember_nn.functional` checks the arguments and calls
these with the ATen argument order; `reduction` is "none", "mean" or "sum".
"""
from ..._dispatch import op
from ..elementwise import minimum, where
from .pointwise_loss import reduce_loss
from .sampling import embedding, one_hot

__all__ = ["cosine_embedding_loss", "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss"]


@op(composite=True)
def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction="mean"):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1."""
    eps = 1e-12
    dot = (input1 * input2).sum(-1)
    norms = ((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps)
    cos = dot / norms.sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).relu(), 0.0)
    return reduce_loss(loss, reduction)


def _pairwise_distance(x1, x2, p, eps):
    return (x1 - x2 + eps).norm(p, -1, False)


@op(composite=True)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with the p-norm pairwise distance d."""
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return reduce_loss((d_pos - d_neg + margin).relu(), reduction)


@op(composite=True)
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, reduction="mean"):
    """sum over i != y of max(0, margin - x[y] + x[i])^p / C (multi-class hinge)."""
    unbatched = input.dim() <= 1
    x = input.reshape(1, -1) if unbatched else input
    t = target.reshape(-1)
    n, c = x.shape
    picked = embedding(x.t(), t).diagonal().unsqueeze(1) if n else x[:, :1]
    onehot = one_hot(t, c).to(x.dtype)
    terms = (margin - picked + x).relu()
    if p == 2:
        terms = terms * terms
    if weight is not None:
        terms = terms * embedding(weight.reshape(-1, 1), t).reshape(n, 1)
    loss = (terms * (1 - onehot)).sum(1) / c
    if unbatched:
        loss = loss.reshape(())
    return reduce_loss(loss, reduction)


@op(composite=True)
def multilabel_margin_loss(input, target, reduction="mean"):
    """sum over targets j and non-targets i of max(0, 1 - (x[y_j] - x[i])) / C; the target
    list of each sample ends at the first -1."""
    unbatched = input.dim() <= 1
    x = input.reshape(1, -1) if unbatched else input
    t = target.reshape(1, -1) if unbatched else target
    if tuple(t.shape) != tuple(x.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    n, c = x.shape
    # A sample's labels are its target entries before the first -1 (a running product of
    # "is a label" masks the rest); each listed entry j meets each non-label class i once,
    # so a class listed twice counts twice, as in PyTorch's kernel.
    listed = (t >= 0).long().cumprod(1).bool()
    hot = one_hot(where(listed, t, 0), c) * listed.unsqueeze(-1)  # [b, slot, class]
    listings = hot.sum(1)  # [b, class]: how often each class is listed
    pairs = (listings.unsqueeze(2) * (listings == 0).unsqueeze(1)).to(x.dtype)  # [b, j, i]
    margins = (1 - (x.unsqueeze(2) - x.unsqueeze(1))).relu()  # [b, j, i] = 1 - (x_j - x_i)
    loss = (margins * pairs).sum((1, 2)) / c
    if unbatched:
        loss = loss.reshape(())
    return reduce_loss(loss, reduction)
