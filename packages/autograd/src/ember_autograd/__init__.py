"""ember-autograd: reverse-mode automatic differentiation for ember tensors.

Importing it fills the autograd extension point of ember_tensor: ``Tensor.backward()``,
``register_hook`` and ``retain_grad`` start working, and every op call goes through the
recording wrapper (`_recording`), which builds the graph from one table of derivative
rules (`_rules`).

>>> import ember_tensor as torch
>>> import ember_autograd
>>> x = torch.tensor([1., 2.], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4.])
"""

import ember_tensor
from ember_tensor.version import check_layers

__version__ = "0.1.0"

_NEEDED_BY = f"ember-autograd {__version__}"
check_layers(__file__, _NEEDED_BY)

from ember_tensor.dispatch import install_autograd, register_wrapper  # noqa: E402

from ._grad_mode import (  # noqa: E402
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from ._function import Function, FunctionCtx, InplaceFunction, NestedIOFunction, once_differentiable  # noqa: E402
from ._tensor_api import AutogradHooks, backward, grad  # noqa: E402
from ._variable import Variable  # noqa: E402
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402
from . import _recording, anomaly_mode, forward_ad, functional, graph, profiler  # noqa: E402,F401

install_autograd(AutogradHooks())
register_wrapper(_recording.record)

__all__ = [
    "Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction", "Variable", "backward", "grad",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
    "is_inference_mode_enabled", "once_differentiable", "gradcheck", "gradgradcheck", "detect_anomaly",
    "set_detect_anomaly", "is_anomaly_enabled", "forward_ad", "functional", "graph", "profiler", "anomaly_mode",
]
