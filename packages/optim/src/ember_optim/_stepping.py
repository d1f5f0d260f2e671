"""The step loop the element-wise optimizers share: closure, groups, state creation."""
import ember_autograd
import ember_tensor

from ._helpers import params_with_grad
from .optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["GroupwiseOptimizer"]


class GroupwiseOptimizer(Optimizer):
    """An optimizer whose step is one functional call per parameter group.

    Subclasses name their state (``_state_keys``), create it (``_init_state``) and apply
    the update (``_update(group, params, grads, states)`` where ``states`` is a list of
    lists, one per key, in ``_state_keys`` order). A complex parameter is stepped as its
    real view (``view_as_real``), with its gradient and state, as PyTorch does: each of
    its real and imaginary parts is a coordinate of its own.
    """

    _state_keys = ()

    def _init_state(self, param, group):
        raise NotImplementedError

    def _update(self, group, params, grads, states):
        raise NotImplementedError

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = None
        if closure is not None:
            with ember_autograd.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads = params_with_grad(group)
            for p in params:
                if len(self.state[p]) == 0:
                    self.state[p].update(self._init_state(p, group))
            states = [[self.state[p].get(key) for p in params] for key in self._state_keys]
            if any(p.is_complex() for p in params):
                params, grads = _real_views(params), _real_views(grads)
                states = [_real_views(values) for values in states]
            self._update(group, params, grads, states)
        return loss


def _real_views(values):
    """`values` with each complex tensor replaced by its real view (..., 2)."""
    return [ember_tensor.view_as_real(v) if isinstance(v, ember_tensor.Tensor) and v.is_complex() else v
            for v in values]
