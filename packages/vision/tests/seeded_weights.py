"""Deterministic model weights from NumPy alone, so a fixture's expected logits (computed
once with real torchvision, see tools/torchvision_tables.py) can be checked without it."""
import numpy as np

__all__ = ["seeded_state_dict", "seeded_input"]


def seeded_state_dict(shapes, seed=0):
    """``{key: float32 array}`` for ``[[key, shape], ...]``: He-scaled normal weights, small
    biases, BatchNorm statistics near (0, 1) so activations stay O(1) through deep nets."""
    rng = np.random.default_rng(seed)
    state = {}
    for key, shape in shapes:
        if key.endswith("num_batches_tracked"):
            state[key] = np.array(0, dtype=np.int64)
        elif key.endswith("running_var"):
            state[key] = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        elif key.endswith("running_mean") or key.endswith("bias"):
            state[key] = rng.normal(0.0, 0.1, shape).astype(np.float32)
        elif len(shape) == 1:  # BatchNorm / LayerNorm scale
            state[key] = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        else:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            state[key] = rng.normal(0.0, np.sqrt(2.0 / fan_in), shape).astype(np.float32)
    return state


def seeded_input(shape, seed=1):
    """A fixed float32 input batch."""
    return np.random.default_rng(seed).normal(0.0, 1.0, shape).astype(np.float32)
