"""Derivatives of matrix products.

`matmul` carries the rule (its batch dims broadcast; the engine sums them back), and mm and
bmm share it (they run matmul's body without dispatching it again); mv, dot, outer and
addmv/baddbmm are made of matmul, mul and add. `addmm` has its own rule so that a linear
layer records one node.
"""
from ._conjugate import conj
from ._registry import composite, derivative


def _matmul_name(input, other, **_):
    a, b = input.dim(), other.dim()
    if a == 2 and b == 2:
        return "MmBackward0"
    if a == 1 and b == 1:
        return "DotBackward0"
    if a == 2 and b == 1:
        return "MvBackward0"
    if a == 3 and b == 3 and input.shape[0] == other.shape[0]:
        return "BmmBackward0"
    return "MatmulBackward0"


def _product_name(input, mat2, **_):
    return _matmul_name(input, mat2)


@derivative("mm", "bmm", inputs=("input", "mat2"), name=_product_name,
            save=lambda input, mat2, **_: (input, mat2))
@derivative("matmul", inputs=("input", "other"), name=_matmul_name,
            save=lambda input, other, **_: (input, other))
def matmul(ctx, grad, a, b):
    needs = ctx.needs_input_grad
    # Complex operands: each gradient multiplies by the conjugate of the other (a no-op
    # for real tensors, whose conj is themselves).
    a, b = conj(a), conj(b)
    grad_a = grad_b = None
    if a.dim() == 1 and b.dim() == 1:
        return (grad * b if needs[0] else None, grad * a if needs[1] else None)
    if b.dim() == 1:
        # (..., n, k) @ (k,) -> (..., n)
        if needs[0]:
            grad_a = grad.unsqueeze(-1) * b
        if needs[1]:
            grad_b = (a.transpose(-1, -2) @ grad.unsqueeze(-1)).squeeze(-1)
        return grad_a, grad_b
    if a.dim() == 1:
        # (k,) @ (..., k, m) -> (..., m)
        if needs[0]:
            grad_a = (grad.unsqueeze(-2) @ b.transpose(-1, -2)).squeeze(-2)
        if needs[1]:
            grad_b = a.unsqueeze(-1) * grad.unsqueeze(-2)
        return grad_a, grad_b
    if needs[0]:
        grad_a = grad @ b.transpose(-1, -2)
    if needs[1]:
        if b.dim() == 2 and a.dim() > 2:
            # A matrix broadcast over a's batch (x @ W on a sequence): its gradient is one
            # GEMM over all rows, not a product per batch element summed afterwards.
            grad_b = a.reshape(-1, a.shape[-1]).transpose(0, 1) @ grad.reshape(-1, grad.shape[-1])
        else:
            grad_b = a.transpose(-1, -2) @ grad
    return grad_a, grad_b


@derivative("addmm", inputs=("input", "mat1", "mat2"),
            save=lambda input, mat1, mat2, *, beta=1, alpha=1, **_: (mat1, mat2, beta, alpha))
def addmm(ctx, grad, mat1, mat2, beta, alpha):
    needs = ctx.needs_input_grad
    mat1, mat2 = conj(mat1), conj(mat2)  # conjugates for complex operands, as in matmul
    grad_input = grad_mat1 = grad_mat2 = None
    if needs[0]:
        grad_input = grad if beta == 1 else grad * beta
    if needs[1]:
        grad_mat1 = grad.mm(mat2.t())
        if alpha != 1:
            grad_mat1 = grad_mat1 * alpha
    if needs[2]:
        grad_mat2 = mat1.t().mm(grad)
        if alpha != 1:
            grad_mat2 = grad_mat2 * alpha
    return grad_input, grad_mat1, grad_mat2


composite("mv", "dot", "outer", "addmv", "baddbmm")
