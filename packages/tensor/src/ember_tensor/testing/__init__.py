"""`torch.testing` for ember: `assert_close` and `make_tensor`, with PyTorch's defaults,
checks and messages, for any device; and `opdb`, ember's op database (PyTorch's OpInfo
idea: every op's samples, references, dtypes and errors as data), for every package's
tests.

>>> import ember_tensor as et
>>> from ember_tensor.testing import assert_close
>>> assert_close(et.tensor([1.0, 2.0]), et.tensor([1.0, 2.0 + 1e-7]))
"""
from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
