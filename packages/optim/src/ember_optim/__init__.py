"""ember-optim: optimizers and learning-rate schedulers (``torch.optim``).

Every optimizer keeps PyTorch's contract (``defaults``, ``param_groups``, per-parameter
``state``, ``state_dict``) and delegates its arithmetic to a functional form
(``ember_optim.sgd``, ``ember_optim.adam``, ...). SGD, Adam and AdamW run fused Numba
kernels (one pass per parameter) on contiguous float32/float64 CPU tensors.

>>> import ember_tensor as torch
>>> import ember_optim as optim
>>> w = torch.tensor([1.0, -1.0], requires_grad=True)
>>> opt = optim.SGD([w], lr=0.5)
>>> w.grad = torch.tensor([1.0, 1.0])
>>> opt.step()
>>> w
tensor([ 0.5000, -1.5000], requires_grad=True)
"""

import ember_autograd
import ember_tensor
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-optim {__version__}"
check_layers(__file__, _NEEDED_BY)

from .optimizer import Optimizer  # noqa: E402 -- after the version checks
from .adadelta import Adadelta, adadelta  # noqa: E402
from .adagrad import Adagrad, adagrad  # noqa: E402
from .adam import Adam, AdamW, adam, adamw  # noqa: E402
from .adamax import Adamax, adamax  # noqa: E402
from .asgd import ASGD, asgd  # noqa: E402
from .lbfgs import LBFGS  # noqa: E402
from .nadam import NAdam, nadam  # noqa: E402
from .radam import RAdam, radam  # noqa: E402
from .rmsprop import RMSprop, rmsprop  # noqa: E402
from .rprop import Rprop, rprop  # noqa: E402
from .sgd import SGD, sgd  # noqa: E402
from .sparse_adam import SparseAdam, sparse_adam  # noqa: E402
from . import lr_scheduler, swa_utils  # noqa: E402

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "Adadelta",
    "RMSprop", "Rprop", "ASGD", "LBFGS", "SparseAdam", "lr_scheduler",
    "sgd", "adam", "adamw", "adamax", "nadam", "radam", "adagrad", "adadelta", "rmsprop", "rprop",
    "asgd", "sparse_adam",
]
