"""``torch.func``: composable function transforms (grad, vjp, jvp, jacrev, jacfwd, hessian,
vmap) and the module helpers that make models functions (functional_call,
stack_module_state).

Transforms are built on ember's reverse-mode autograd, and vmap on a loop over the
samples: values, pytree rules and errors are PyTorch's; forward mode and batched kernels
are not there (jvp/jacfwd run two or more reverse passes, vmap one call per sample). It
lives in ember-nn because functional_call needs modules; the transforms need only autograd.

>>> import ember_tensor as torch
>>> x = torch.tensor([[1., 2.], [3., 4.]])
>>> vmap(grad(lambda row: (row ** 2).sum()))(x).tolist()
[[2.0, 4.0], [6.0, 8.0]]
"""
from ._grad import grad, grad_and_value
from ._jacobian import hessian, jacfwd, jacrev
from ._jvp import jvp, linearize
from ._module_state import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._transparent import debug_unwrap, functionalize
from ._vjp import vjp
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vmap", "replace_all_batch_norm_modules_", "functionalize", "hessian", "jacfwd",
           "jacrev", "jvp", "linearize", "vjp", "functional_call", "stack_module_state", "debug_unwrap"]
