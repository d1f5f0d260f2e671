"""Instance normalisation: InstanceNorm1d/2d/3d (statistics per sample and channel)."""
import warnings

from .. import functional as F
from .batchnorm import _LazyNormBase, _NormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _spatial_dims = 0

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _check_input_dim(self, input):
        n = self._spatial_dims
        if input.dim() not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        unbatched = input.dim() == self._spatial_dims + 1
        feature_dim = 0 if unbatched else 1
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match num_features "
                                 f"({self.num_features}), but got: {input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          stacklevel=2)
        batched = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(batched, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over (N, C, L) or (C, L)."""

    _spatial_dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over (N, C, H, W) or (C, H, W)."""

    _spatial_dims = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over (N, C, D, H, W) or (C, D, H, W)."""

    _spatial_dims = 3


class _LazyInstanceNorm(_LazyNormBase, _InstanceNorm):
    def _feature_dim(self, input):
        return 0 if input.dim() == self._spatial_dims + 1 else 1


class LazyInstanceNorm1d(_LazyInstanceNorm):
    """An InstanceNorm1d whose ``num_features`` is taken from the first input."""

    cls_to_become = InstanceNorm1d
    _spatial_dims = 1


class LazyInstanceNorm2d(_LazyInstanceNorm):
    """An InstanceNorm2d whose ``num_features`` is taken from the first input."""

    cls_to_become = InstanceNorm2d
    _spatial_dims = 2


class LazyInstanceNorm3d(_LazyInstanceNorm):
    """An InstanceNorm3d whose ``num_features`` is taken from the first input."""

    cls_to_become = InstanceNorm3d
    _spatial_dims = 3
