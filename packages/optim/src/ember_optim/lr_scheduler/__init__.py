"""Learning-rate schedulers (``torch.optim.lr_scheduler``).

>>> import ember_tensor as torch
>>> from ember_optim import SGD
>>> opt = SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
>>> sched = StepLR(opt, step_size=2, gamma=0.5)
>>> lrs = []
>>> for _ in range(5):
...     opt.step()
...     sched.step()
...     lrs.append(sched.get_last_lr()[0])
>>> lrs
[1.0, 0.5, 0.5, 0.25, 0.25]
"""
from ._base import LambdaLR, LRScheduler, MultiplicativeLR
from ._composite import ChainedScheduler, ReduceLROnPlateau, SequentialLR
from ._cyclic import CyclicLR, OneCycleLR
from ._decay import (ConstantLR, CosineAnnealingLR, CosineAnnealingWarmRestarts, ExponentialLR, LinearLR,
                     MultiStepLR, PolynomialLR, StepLR)

_LRScheduler = LRScheduler  # PyTorch's old name, still imported by older code

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
           "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LRScheduler"]
