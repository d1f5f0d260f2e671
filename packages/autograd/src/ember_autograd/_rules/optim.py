"""The fused optimizer updates (`_fused_sgd_`, `_fused_adam_`, ...) and AMP's gradient ops
(`_amp_foreach_non_finite_check_and_unscale_`, `_amp_update_scale_`) have no derivative:
optimizers and GradScaler call them under no_grad, and PyTorch's derivatives.yaml lists none."""
from ._registry import not_differentiable

not_differentiable("_fused_sgd_", "_fused_adam_", "_fused_adamw_", "_fused_adagrad_",
                   "_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_")
