"""The fused optimizer updates (`_fused_sgd_`, `_fused_adam_`, ...) have no derivative:
optimizers call them under no_grad, and PyTorch's derivatives.yaml lists none."""
from ._registry import not_differentiable

not_differentiable("_fused_sgd_", "_fused_adam_", "_fused_adamw_", "_fused_adagrad_")
