"""Fit y = 3x + 2 by gradient descent, with ember_tensor ops and hand-written gradients.

The smallest end-to-end job the stack can run today: no autograd yet (ember-autograd is
planned), so the gradients of the mean squared error are written out by hand:

    loss = mean((w*x + b - y)**2)
    dloss/dw = 2 * mean((w*x + b - y) * x)
    dloss/db = 2 * mean(w*x + b - y)

Run: python examples/train_linear.py
"""

import ember_tensor as torch

TRUE_W, TRUE_B = 3.0, 2.0
STEPS, LEARNING_RATE = 300, 0.5


def main():
    x = torch.linspace(0.0, 1.0, 64)
    y = TRUE_W * x + TRUE_B
    ones = torch.ones(64)
    n = x.numel()

    w = torch.zeros(())
    b = torch.zeros(())
    for step in range(STEPS):
        error = w * x + b - y
        # Sums as dot products: they are all the reduction this job needs.
        loss = torch.dot(error, error) / n
        if step % 60 == 0:
            print(f"step {step:3d}  loss {loss.item():.6f}  w {w.item():.4f}  b {b.item():.4f}")
        grad_w = 2 * torch.dot(error, x) / n
        grad_b = 2 * torch.dot(error, ones) / n
        w = w - LEARNING_RATE * grad_w
        b = b - LEARNING_RATE * grad_b

    print(f"learned y = {w.item():.4f}x + {b.item():.4f}  (true: y = {TRUE_W}x + {TRUE_B})")
    if abs(w.item() - TRUE_W) > 1e-3 or abs(b.item() - TRUE_B) > 1e-3:
        raise SystemExit("did not converge")


if __name__ == "__main__":
    main()
