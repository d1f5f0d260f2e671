"""What the random-sampling tests share: `gen(seed)`, a seeded Generator of its own, and
`values(t)`, a sample as float64 NumPy values; `N`, the sample size of the statistical
checks, and `assert_close` for their tolerances (about five standard errors, so that
seeded checks cannot flake)."""
import numpy as np

import ember_tensor as torch

__all__ = ["gen", "values", "N", "assert_close"]


def gen(seed=0):
    """A new Generator seeded with `seed`."""
    return torch.Generator().manual_seed(seed)


def values(t):
    """A tensor's values as a float64 NumPy array."""
    return np.asarray(t.detach().numpy() if t.requires_grad else t.numpy(), dtype=np.float64)


N = 200_000


def assert_close(actual, expected, tol):
    """|actual - expected| < tol, said with both numbers when not."""
    assert abs(actual - expected) < tol, f"{actual} is not within {tol} of {expected}"
