"""SparseAdam: Adam for sparse gradients (``torch.optim.SparseAdam``).

Only the rows (entries) a gradient holds are updated, moments included: a row that a
batch did not touch keeps its moments instead of decaying them, which is what makes
the update cost proportional to the batch rather than to the embedding table.
"""
import math

import ember_autograd
import ember_tensor

from .optimizer import Optimizer

__all__ = ["SparseAdam", "sparse_adam"]


class SparseAdam(Optimizer):
    """Adam restricted to the entries of sparse gradients, as ``torch.optim.SparseAdam``.

    >>> import ember_tensor as torch
    >>> w = torch.zeros(3, 1, requires_grad=True)
    >>> w.grad = torch.sparse_coo_tensor([[1]], [[2.0]], (3, 1))
    >>> SparseAdam([w], lr=0.1).step()
    >>> [round(v, 4) for v in w.detach().reshape(-1).tolist()]
    [0.0, -0.1, 0.0]
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))

    def step(self, closure=None):
        """Perform one update; ``closure`` re-evaluates the model and returns the loss."""
        loss = None
        if closure is not None:
            with ember_autograd.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads, exp_avgs, exp_avg_sqs, steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = ember_tensor.zeros_like(p)
                    state["exp_avg_sq"] = ember_tensor.zeros_like(p)
                state["step"] += 1
                params.append(p)
                grads.append(p.grad)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
                steps.append(state["step"])
            sparse_adam(params, grads, exp_avgs, exp_avg_sqs, steps, eps=group["eps"], beta1=beta1,
                        beta2=beta2, lr=group["lr"], maximize=group["maximize"])
        return loss


def sparse_adam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, eps, beta1, beta2, lr, maximize):
    """The SparseAdam update in place (``torch.optim._functional.sparse_adam``).

    PyTorch's arithmetic, in tensor ops on the parameter's device: the entries at the
    gradient's (coalesced, so unique) positions are gathered with advanced indexing and
    written back with ``index_put_``, so nothing else of the table is touched.
    """
    with ember_autograd.no_grad():
        for param, grad, exp_avg, exp_avg_sq, step in zip(params, grads, exp_avgs, exp_avg_sqs, state_steps):
            grad = grad.coalesce()  # the update is not linear: one entry per position
            indices, values = grad._indices(), grad._values()
            if values.numel() == 0:
                continue
            if maximize:
                values = -values
            where = tuple(indices[d] for d in range(indices.shape[0]))
            old_exp_avg, old_exp_avg_sq = exp_avg[where], exp_avg_sq[where]
            new_exp_avg = old_exp_avg + (values - old_exp_avg) * (1 - beta1)
            new_exp_avg_sq = old_exp_avg_sq + (values * values - old_exp_avg_sq) * (1 - beta2)
            exp_avg.index_put_(where, new_exp_avg)
            exp_avg_sq.index_put_(where, new_exp_avg_sq)
            step_size = lr * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
            param.index_put_(where, param[where] - new_exp_avg / (new_exp_avg_sq.sqrt() + eps) * step_size)
