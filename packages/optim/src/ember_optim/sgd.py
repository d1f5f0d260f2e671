"""Stochastic gradient descent, with momentum, dampening, Nesterov and weight decay."""
import ember_autograd
import ember_tensor
from ember_tensor.sparse_ops import add_sparse_into_dense_

from ._fused import check_fused_options
from ._helpers import check_non_negative, params_with_grad, use_fused, zeros_state
from .optimizer import Optimizer, _use_grad_for_differentiable

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    With momentum ``mu`` and dampening ``tau``: ``b = mu * b + (1 - tau) * g`` (``b = g`` on
    the first step), then ``p -= lr * b`` (``p -= lr * (g + mu * b)`` with ``nesterov``).

    >>> import ember_tensor as torch
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> w.grad = torch.tensor([0.5, -1.0])
    >>> SGD([w], lr=0.1).step()
    >>> w
    tensor([0.9500, 2.1000], requires_grad=True)
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        check_non_negative(lr, "Invalid learning rate: {}")
        check_non_negative(momentum, "Invalid momentum value: {}")
        check_non_negative(weight_decay, "Invalid weight_decay value: {}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach,
                        differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused_options(fused, foreach, differentiable)
        if fused:  # GradScaler's grad_scale/found_inf go to the fused op (see Adam)
            self._step_supports_amp_scaling = True

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Perform one SGD step; ``closure`` re-evaluates the model and returns the loss."""
        loss = None
        if closure is not None:
            with ember_autograd.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads = params_with_grad(group)
            buffers = [self.state[p].get("momentum_buffer") for p in params]
            sgd(params, grads, buffers, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"], fused=group["fused"],
                grad_scale=getattr(self, "grad_scale", None), found_inf=getattr(self, "found_inf", None))
            if group["momentum"] != 0:
                for p, buf in zip(params, buffers):
                    self.state[p]["momentum_buffer"] = buf
        return loss


def sgd(params, d_p_list, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov,
        maximize, fused=None, foreach=None, has_sparse_grad=False, grad_scale=None, found_inf=None):
    """The SGD update of ``params`` in place (``torch.optim.sgd``).

    ``momentum_buffer_list`` holds each parameter's buffer or None; new buffers are
    written into it. ``fused=None`` uses the one-pass op (``ember_tensor._fused_sgd_``, CPU
    and CUDA) where the tensors allow.
    """
    continuing, first_steps = [], []  # the fused parameters, by whether they have a buffer
    for i, (param, grad) in enumerate(zip(params, d_p_list)):
        buf = momentum_buffer_list[i]
        if grad.is_sparse:
            _sgd_sparse(param, grad, weight_decay, momentum, lr, maximize)
        elif use_fused(fused, (param, grad, buf)):
            (first_steps if buf is None and momentum != 0 else continuing).append(i)
        else:
            momentum_buffer_list[i] = _sgd_plain(param, grad, buf, weight_decay, momentum, lr,
                                                 dampening, nesterov, maximize)
    for indices, is_first_step in ((continuing, False), (first_steps, True)):
        if not indices:
            continue
        if is_first_step:
            for i in indices:
                momentum_buffer_list[i] = zeros_state(params[i])  # the op writes it
        ember_tensor._fused_sgd_(
            [params[i] for i in indices], [d_p_list[i] for i in indices],
            [momentum_buffer_list[i] for i in indices] if momentum != 0 else [],
            weight_decay=weight_decay, momentum=momentum, lr=lr, dampening=dampening,
            nesterov=nesterov, maximize=maximize, is_first_step=is_first_step,
            grad_scale=grad_scale, found_inf=found_inf)


def _sgd_sparse(param, grad, weight_decay, momentum, lr, maximize):
    """A sparse gradient (``Embedding(sparse=True)``) moves only the rows it holds."""
    if momentum != 0 or weight_decay != 0:
        raise RuntimeError("ember: SGD supports sparse gradients only without momentum and weight_decay "
                           "(use SparseAdam, or a dense gradient)")
    add_sparse_into_dense_(param, grad, alpha=lr if maximize else -lr)


def _sgd_plain(param, grad, buf, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """The reference form, one tensor op at a time (PyTorch's single-tensor SGD)."""
    grad = -grad if maximize else grad
    if weight_decay != 0:
        grad = grad.add(param, alpha=weight_decay)
    if momentum != 0:
        if buf is None:
            buf = grad.detach().clone()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - dampening)
        grad = grad.add(buf, alpha=momentum) if nesterov else buf
    param.add_(grad, alpha=-lr)
    return buf
