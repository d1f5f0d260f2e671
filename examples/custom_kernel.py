"""Custom kernels in Python: the slides' NormPdf Function and Jacobi solver, rewritten with
ember.kernel and ember.raw_kernel instead of SciPy and a C++ extension.

Run: python examples/custom_kernel.py   (with `import torch` in place of `import ember as
torch` the kernels do not exist: they are ember's.)
"""
import math

import numpy as np

import ember as torch

LOC, SCALE = 0.0, 1.0


@torch.kernel.helper
def _norm_pdf(x):
    z = (x - LOC) / SCALE
    return math.exp(-0.5 * z * z) / (SCALE * math.sqrt(2 * math.pi))


# d/dx pdf(x) = -pdf(x) * (x - loc) / scale^2: the slides' NormPdf.backward, as a kernel.
@torch.kernel(grad=[lambda x: -_norm_pdf(x) * (x - LOC) / SCALE ** 2])
def norm_pdf(x):
    return _norm_pdf(x)


def jacobi_cpu(out, A, b, iters):
    n = b.shape[0]
    current = np.zeros(n)
    for _ in range(iters):
        for i in range(n):
            total = b[i]
            for j in range(n):
                if j != i:
                    total -= A[i, j] * current[j]
            out[i] = total / A[i, i]
        current[:] = out[:]


def jacobi_backward(grad, A, b, iters):
    return None, jacobi_solve(A.t().contiguous(), grad, iters), None


jacobi_solve = torch.raw_kernel(jacobi_cpu, output=lambda A, b, iters: (b.shape, b.dtype),
                                backward=jacobi_backward, name="jacobi_solve", inputs=["A", "b", "iters"])


def main():
    x = torch.linspace(-3, 3, 7, dtype=torch.float64, requires_grad=True)
    y = norm_pdf(x)
    y.backward(torch.ones_like(y))
    print("norm_pdf(x):", y.detach())
    print("d/dx:       ", x.grad)
    expected = -np.exp(-0.5 * x.detach().numpy() ** 2) / math.sqrt(2 * math.pi) * x.detach().numpy()
    assert np.allclose(x.grad.numpy(), expected)

    A = torch.tensor([[4.0, 1.0, 0.0], [1.0, 5.0, 2.0], [0.0, 2.0, 6.0]], dtype=torch.float64)
    b = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    solution = jacobi_solve(A, b, 1000)
    (grad_b,) = torch.autograd.grad(solution, b, grad_outputs=torch.ones_like(solution))
    print("jacobi_solve(A, b):", solution.detach(), " numpy:", np.linalg.solve(A.numpy(), b.detach().numpy()))
    print("d sum(x) / d b:    ", grad_b)
    assert np.allclose(solution.detach().numpy(), np.linalg.solve(A.numpy(), b.detach().numpy()))


if __name__ == "__main__":
    main()
