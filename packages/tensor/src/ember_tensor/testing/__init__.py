"""`torch.testing` for ember: `assert_close` and `make_tensor`, with PyTorch's defaults,
checks and messages, for any device.

>>> import ember_tensor as et
>>> from ember_tensor.testing import assert_close
>>> assert_close(et.tensor([1.0, 2.0]), et.tensor([1.0, 2.0 + 1e-7]))
"""
from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
