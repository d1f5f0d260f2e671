"""``torch.backends``: the switches PyTorch programs set for the libraries under the ops.

ember uses none of cuDNN, oneDNN (mkldnn), MPS, MKL or opt_einsum: each module answers
``is_available()`` with False and keeps the flags programs set
(``torch.backends.cudnn.benchmark = True`` works, and changes nothing, because ember's
convolutions have one algorithm per device). ``cuda.matmul.allow_tf32`` is the same
state as ``torch.set_float32_matmul_precision``. The meta-package serves this package as
``ember.backends``; it is named backend_flags here so as not to be read as `_backends`,
the kernels.
"""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
