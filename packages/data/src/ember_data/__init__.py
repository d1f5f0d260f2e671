"""ember-data: datasets and loading (``torch.utils.data``).

Planned, not written yet: Dataset, IterableDataset, DataLoader, samplers, collation
and loaders for standard file formats.

For now the package only takes its place in the stack: it checks at import that the
layers below it are versions it works with (the ranges in its pyproject.toml).
"""

import ember_autograd
import ember_tensor
from ember_tensor._version import check_layer_version

__version__ = "0.1.0"

_NEEDED_BY = f"ember-data {__version__}"
check_layer_version("ember-tensor", ember_tensor.__version__, "0.1", "0.2", _NEEDED_BY)
check_layer_version("ember-autograd", ember_autograd.__version__, "0.1", "0.2", _NEEDED_BY)
