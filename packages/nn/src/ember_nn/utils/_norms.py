"""Norm helpers shared by weight_norm and spectral_norm (both forms)."""
__all__ = ["norm_except_dim", "normalize", "weight_as_matrix"]


def norm_except_dim(v, dim):
    """The 2-norm of `v` over every dim but `dim` (kept with size 1), or over all of it
    when `dim` is -1 (a 0-d result)."""
    if dim == -1:
        return v.norm()
    dim = dim % v.dim()
    others = [d for d in range(v.dim()) if d != dim]
    if not others:
        return v.abs()
    return v.pow(2).sum(others, keepdim=True).sqrt()


def normalize(x, eps):
    """``x / max(||x||, eps)`` for a vector `x` (F.normalize along dim 0)."""
    return x / x.norm().clamp(min=eps)


def weight_as_matrix(weight, dim):
    """`weight` as a matrix whose rows run along `dim`."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.size(0), -1)
