"""ember: PyTorch's API on kernels compiled by Numba.

``import ember as torch`` is the point of this package: it re-exports the layers of the
stack under PyTorch's names. The top level (``ember.tensor``, ``ember.Tensor``,
``ember.float32``, ...) is ember_tensor's public surface; submodule paths such as
``ember.cuda`` are served, lazily, by the package that holds them (see _aliases.py).

Below the star import, names such as ``any``, ``bool`` and ``range`` are ember_tensor's,
not Python's builtins: keep logic out of this file.
"""

import ember_tensor
from ember_tensor import *  # noqa: F403 -- PyTorch's top level is ember_tensor's surface
from ember_tensor._version import check_layer_version

from ember import _aliases

__version__ = "0.1.0"

# ember pins the exact set of layers it was tested with (pyproject.toml); a range check
# of [pin, next patch) accepts that release and its dev/post builds, nothing else.
_NEEDED_BY = f"ember {__version__}"
check_layer_version("ember-tensor", ember_tensor.__version__, "0.1.0", "0.1.1", _NEEDED_BY)

_aliases.install()
__getattr__ = _aliases.module_getattr

__all__ = [*ember_tensor.__all__]
