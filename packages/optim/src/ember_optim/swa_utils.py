"""Stochastic weight averaging (``torch.optim.swa_utils``): AveragedModel, SWALR, update_bn.

ember-optim may not import ember-nn, so ``AveragedModel`` meets the model by duck typing:
it becomes a subclass of whatever ``Module`` class the given model derives from (found
on the model's class), and ``update_bn`` recognises batch-norm layers by their running
statistics rather than by their class.
"""
import copy
import itertools
import math

import ember_autograd
import ember_tensor

from .lr_scheduler import LRScheduler
from .lr_scheduler._base import format_param

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn",
           "get_ema_avg_fn", "get_swa_avg_fn"]


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place exponential moving average over lists of tensors."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param_list, current_param_list, _):
        for ema, current in zip(ema_param_list, current_param_list):
            ema.lerp_(current, 1 - decay)

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running (equal-weight) average over lists of tensors."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        for averaged, current in zip(averaged_param_list, current_param_list):
            averaged.add_((current - averaged) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``(ema, current, n) -> decay * ema + (1 - decay) * current``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """``(average, current, n) -> average + (current - average) / (n + 1)``."""

    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def _module_base(model):
    for cls in type(model).__mro__:
        if cls.__name__ == "Module" and hasattr(cls, "register_buffer") and hasattr(cls, "parameters"):
            return cls
    raise TypeError(f"AveragedModel expects a Module (e.g. an ember.nn.Module), but got {type(model).__name__}")


class AveragedModel:
    """A copy of ``model`` whose parameters are a running (SWA) or custom average.

    ``update_parameters(model)`` folds the model's current parameters into the average;
    calling the AveragedModel runs the averaged copy. The instance is a Module of the
    model's framework (its class derives from the model's ``Module`` base).
    """

    _classes = {}

    def __new__(cls, model, *args, **kwargs):
        base = _module_base(model)
        if base not in AveragedModel._classes:
            AveragedModel._classes[base] = type("AveragedModel", (AveragedModel, base),
                                                {"__module__": __name__, "__doc__": AveragedModel.__doc__})
        return base.__new__(AveragedModel._classes[base])

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", ember_tensor.tensor(0, dtype=ember_tensor.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """Run the averaged copy of the model."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the average."""
        with ember_autograd.no_grad():
            if self.use_buffers:
                averaged = itertools.chain(self.module.parameters(), self.module.buffers())
                current = itertools.chain(model.parameters(), model.buffers())
            else:
                averaged, current = self.parameters(), model.parameters()
            averaged_list, current_list = [], []
            first = self.n_averaged.item() == 0
            for p_averaged, p_model in zip(averaged, current):
                p_model = p_model.detach().to(device=p_averaged.device)
                averaged_list.append(p_averaged.detach())
                current_list.append(p_model)
                if first:
                    p_averaged.detach().copy_(p_model)
            if not first:
                n = self.n_averaged.item()
                if self.multi_avg_fn is not None:
                    self.multi_avg_fn(averaged_list, current_list, n)
                else:
                    avg_fn = self.avg_fn or get_swa_avg_fn()
                    for p_averaged, p_model in zip(averaged_list, current_list):
                        p_averaged.copy_(avg_fn(p_averaged, p_model, n))
            if not self.use_buffers:
                # Buffers (batch-norm statistics) are not averaged: keep the latest ones.
                for b_averaged, b_model in zip(self.module.buffers(), model.buffers()):
                    b_averaged.detach().copy_(b_model.detach().to(device=b_averaged.device))
            self.n_averaged.add_(1)


def _is_batchnorm(module):
    return all(hasattr(module, name) for name in ("running_mean", "running_var", "momentum", "reset_running_stats"))


def update_bn(loader, model, device=None):
    """Recompute the batch-norm running statistics of ``model`` with one pass over ``loader``.

    Each batch-norm layer is reset and switched to a cumulative average (``momentum=None``)
    for the pass; batches that are lists or tuples contribute their first element.
    """
    momenta = {}
    for module in model.modules():
        if _is_batchnorm(module):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with ember_autograd.no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's rate to ``swa_lr`` over ``anneal_epochs`` (cosine or linear), then hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """Interpolate from the rate the annealing started at towards ``swa_lr``."""
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]
