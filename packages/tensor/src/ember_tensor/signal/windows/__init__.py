"""``ember_tensor.signal.windows``: PyTorch's ``torch.signal.windows`` (``ember.signal.windows``).

>>> import ember_tensor as torch
>>> torch.signal.windows.gaussian(3, std=1.0).tolist()[1]
1.0
"""
from ..._ops.signal.signal_windows import (
    bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser,
    nuttall,
)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]
