"""What the sparse tests that take the device as a parameter share: `sparse_case` (an
uncoalesced sparse tensor with its dense array and mask of specified elements) and
`comparable` (a result as dense tensors that `cuda_guard.matches_the_cpu` compares:
a sparse one's layout and coalesced flag included), and `masked_softmax`, the reference
of sparse softmax.
"""
import numpy as np

import ember_tensor as torch

__all__ = ["CASE_RNG", "sparse_case", "comparable", "masked_softmax"]

CASE_RNG = np.random.default_rng(7)


def sparse_case(shape, sparse_dim=None, repeats=2, dtype=torch.float64, density=0.5):
    """An uncoalesced CPU sparse tensor (its entries split into shuffled duplicates; none when
    `repeats` is 0), the dense array it stands for and the mask of its specified elements."""
    sparse_dim = len(shape) if sparse_dim is None else sparse_dim
    mask = CASE_RNG.random(shape[:sparse_dim]) < density
    block = mask.reshape(mask.shape + (1,) * (len(shape) - sparse_dim))
    dense = CASE_RNG.integers(-4, 5, shape).astype(np.float64) * block
    idx = np.zeros((0, int(mask)), np.int64) if sparse_dim == 0 else np.array(np.nonzero(mask)).reshape(sparse_dim, -1)
    picked = dense.reshape((1,) + shape)[:idx.shape[1]] if sparse_dim == 0 else dense[tuple(idx)]
    vals = picked / max(repeats, 1)
    idx = np.concatenate([idx] * repeats, axis=1) if repeats else idx[:, :0]
    vals = np.concatenate([vals] * repeats) if repeats else vals[:0]
    present = np.broadcast_to(block, shape) & (repeats > 0)
    order = CASE_RNG.permutation(len(vals))
    s = torch.sparse_coo_tensor(torch.tensor(idx[:, order]), torch.tensor(vals[order], dtype=dtype), shape)
    return s, dense if repeats else dense * 0, present


def comparable(result):
    """A result as dense tensors that compare across devices: a sparse one as its dense
    tensor and its (sparse, coalesced) flags, on its device."""
    if not result.is_sparse:
        return (result,)
    return result.to_dense(), torch.tensor([True, result.is_coalesced()], device=result.device)


def masked_softmax(a, dim, log, present=None):
    """softmax over the specified entries (`present`; by default the nonzeros), 0 elsewhere."""
    present = a != 0 if present is None else present
    shifted = np.where(present, a, -np.inf)
    peak = np.max(shifted, axis=dim, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    e = np.where(present, np.exp(a - peak), 0)
    soft = e / np.maximum(e.sum(axis=dim, keepdims=True), 1e-300)
    if log:
        return np.where(present, np.log(np.where(present, soft, 1)), 0)
    return soft
