"""``gradcheck`` and ``gradgradcheck``: analytical gradients against central finite
differences (PyTorch's ``torch.autograd.gradcheck``).

The numerical Jacobian perturbs one input element at a time, in place on a detached alias
of the input (so non-contiguous layouts are kept); the analytical one runs one backward
pass per output element. Both are meant for small float64 inputs.
"""
import warnings

import numpy as np

import ember_tensor as E
from ember_tensor import Tensor

from . import _grad_mode

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by `gradcheck` and `gradgradcheck` when the gradients do not match."""


def _as_tuple(x):
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _as_real_problem(func, inputs):
    """`func` and `inputs` with every complex tensor seen as its real pairs: each complex
    input becomes a real leaf (``view_as_real`` of a copy) that the function views as
    complex again, and each complex output is returned as ``view_as_real``. The real
    Jacobian of that map checks the complex gradients through the view ops' rules, which
    carry PyTorch's convention (conjugate Wirtinger derivatives)."""
    real_inputs = tuple(
        E.view_as_real(t.detach().clone()).requires_grad_(t.requires_grad)
        if isinstance(t, Tensor) and t.is_complex() else t for t in inputs)
    was_complex = tuple(isinstance(t, Tensor) and t.is_complex() for t in inputs)

    def real_func(*args):
        args = tuple(E.view_as_complex(a) if c else a for a, c in zip(args, was_complex))
        outputs = func(*args)
        if isinstance(outputs, Tensor):
            return E.view_as_real(outputs) if outputs.is_complex() else outputs
        return tuple(E.view_as_real(o) if isinstance(o, Tensor) and o.is_complex() else o for o in outputs)
    return real_func, real_inputs


def _differentiable(inputs):
    return [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _float_outputs(func, inputs):
    return [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor) and o.is_floating_point()]


def _host(t):
    # A copy: an output may share memory with the input being perturbed.
    return np.array(t.detach().cpu().numpy(), dtype=np.float64).reshape(-1)


def _numerical_jacobians(func, inputs, diff_inputs, eps):
    """[input][output] -> ndarray (numel(input), numel(output)) of central differences."""
    jacobians = []
    # Grad mode stays on: gradgradcheck's function differentiates inside.
    with _grad_mode.enable_grad():
        for _, t in diff_inputs:
            # .data shares memory with the input (func sees the perturbation) but has its own
            # version counter, so graphs that saved the input stay usable.
            alias = t.data
            shape = tuple(t.shape)
            columns = None
            for flat in range(t.numel()):
                index = np.unravel_index(flat, shape) if shape else ()
                index = tuple(int(i) for i in index)
                original = alias[index].item()
                alias[index] = original - eps
                minus = [_host(o) for o in _float_outputs(func, inputs)]
                alias[index] = original + eps
                plus = [_host(o) for o in _float_outputs(func, inputs)]
                alias[index] = original
                if columns is None:
                    columns = [np.zeros((t.numel(), p.size)) for p in plus]
                for j, (p, m) in enumerate(zip(plus, minus)):
                    columns[j][flat] = (p - m) / (2 * eps)
            if columns is None:  # an empty input
                columns = [np.zeros((0, o.numel())) for o in _float_outputs(func, inputs)]
            jacobians.append(columns)
    return jacobians


def _analytical_jacobians(outputs, diff_inputs):
    """[input][output] -> ndarray (numel(input), numel(output)) from backward passes."""
    from ._tensor_api import grad as autograd_grad
    tensors = [t for _, t in diff_inputs]
    jacobians = [[np.zeros((t.numel(), o.numel())) for o in outputs] for t in tensors]
    for j, out in enumerate(outputs):
        if not out.requires_grad:
            continue
        for k in range(out.numel()):
            direction = E.zeros_like(out)
            direction.view(-1)[k] = 1.0
            grads = autograd_grad(out, tensors, direction, retain_graph=True, allow_unused=True)
            for i, (g, t) in enumerate(zip(grads, tensors)):
                if g is not None:
                    if tuple(g.shape) != tuple(t.shape):
                        raise GradcheckError(
                            f"Gradient has incorrect size: got {list(g.shape)}, expected {list(t.shape)}")
                    jacobians[i][j][:, k] = _host(g)
    return jacobians


def _format(matrix):
    return repr(E.tensor(matrix, dtype=E.float64))


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """Check the gradients of `func` at `inputs` against finite differences.

    Args:
        func: takes the tensors of `inputs`, returns a tensor or a tuple of tensors.
        inputs: a tensor or a tuple of arguments; tensors with ``requires_grad`` are checked.
        eps, atol, rtol: the perturbation and the tolerances (``|a - n| <= atol + rtol * |n|``).
        raise_exception: raise `GradcheckError` on a mismatch (else return False).
        fast_mode: compare ``v^T J u`` along random directions instead of full Jacobians
            (for inputs too big to perturb element by element).

    Returns:
        True when every Jacobian matches.

    >>> import ember_tensor as torch
    >>> x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    if any(isinstance(t, Tensor) and t.is_complex() for t in inputs):
        func, inputs = _as_real_problem(func, inputs)
    diff_inputs = _differentiable(inputs)
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none "
                         "of the them have requires_grad=True.")
    for i, t in diff_inputs:
        if t.dtype is not E.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating "
                "point or complex. ", UserWarning, stacklevel=2)
    with _grad_mode.enable_grad():
        outputs = _float_outputs(func, inputs)
    if not check_backward_ad:
        return True

    def fail(message):
        if raise_exception:
            raise GradcheckError(message)
        return False

    if fast_mode:
        return _fast_check(func, inputs, diff_inputs, outputs, eps, atol, rtol, fail)
    try:
        analytical = _analytical_jacobians(outputs, diff_inputs)
    except GradcheckError as error:
        return fail(str(error))
    numerical = _numerical_jacobians(func, inputs, diff_inputs, eps)
    for i, (a_cols, n_cols) in enumerate(zip(analytical, numerical)):
        for j, (a, n) in enumerate(zip(a_cols, n_cols)):
            if not np.allclose(a, n, rtol=rtol, atol=atol, equal_nan=True):
                return fail(
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{_format(n)}\nanalytical:{_format(a)}\n")
    for j, out in enumerate(outputs):
        if not out.requires_grad and any(np.any(n[j] != 0) for n in numerical):
            return fail(f"Jacobian mismatch for output {j}: the output does not require grad, "
                        "but the numerical gradient is not zero")
    return True


def _fast_check(func, inputs, diff_inputs, outputs, eps, atol, rtol, fail):
    """``fast_mode``: compare ``v^T J u`` for random directions u (inputs) and v (outputs)
    instead of whole Jacobians: one backward and two forward passes per input."""
    from ._tensor_api import grad as autograd_grad
    generator = np.random.default_rng(0)
    tensors = [t for _, t in diff_inputs]
    for i, t in enumerate(tensors):
        u = generator.standard_normal(tuple(t.shape))
        alias = t.data
        original = alias.clone()
        step = E.tensor(u * eps, dtype=t.dtype, device=t.device)
        with _grad_mode.enable_grad():
            alias.add_(step)
            plus = [_host(o) for o in _float_outputs(func, inputs)]
            alias.copy_(original).sub_(step)
            minus = [_host(o) for o in _float_outputs(func, inputs)]
            alias.copy_(original)
        for j, out in enumerate(outputs):
            v = generator.standard_normal(tuple(out.shape))
            numerical = float(np.dot((plus[j] - minus[j]) / (2 * eps), v.reshape(-1)))
            analytical = 0.0
            if out.requires_grad:
                (g,) = autograd_grad(out, (t,), E.tensor(v, dtype=out.dtype, device=out.device),
                                     retain_graph=True, allow_unused=True)
                if g is not None:
                    analytical = float(np.dot(_host(g), u.reshape(-1)))
            if not abs(analytical - numerical) <= atol + rtol * abs(numerical):
                return fail(f"Jacobian mismatch for output {j} with respect to input {i},\n"
                            f"numerical:{_format(numerical)}\nanalytical:{_format(analytical)}\n\n"
                            "The above quantities relating the numerical and analytical jacobians are computed "
                            "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more "
                            "background about fast mode. Rerun with fast_mode=False to see the full Jacobians.")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check second-order gradients: `gradcheck` of the gradients of `func` (computed with
    ``create_graph=True``) with respect to `inputs` and the `grad_outputs`.

    Random `grad_outputs` (float64) are drawn when none are given.

    >>> import ember_tensor as torch
    >>> x = torch.tensor([1., 2.], dtype=torch.float64, requires_grad=True)
    >>> gradgradcheck(lambda t: (t * t * t).sum(), (x,))
    True
    """
    from ._tensor_api import grad as autograd_grad
    inputs = _as_tuple(inputs)
    diff = [t for _, t in _differentiable(inputs)]
    with _grad_mode.enable_grad():
        outputs = [o for o in _float_outputs(func, inputs) if o.requires_grad]
    if grad_outputs is None:
        generator = np.random.default_rng(0)
        grad_outputs = []
        for o in outputs:
            g = E.tensor(generator.standard_normal(tuple(o.shape)), dtype=o.dtype, device=o.device)
            if gen_non_contig_grad_outputs and o.dim() >= 2:
                g = g.t().contiguous().t()
            grad_outputs.append(g.requires_grad_())
    grad_outputs = list(_as_tuple(grad_outputs))
    n_inputs = len(inputs)

    def first_derivatives(*args):
        outs = [o for o in _float_outputs(func, args[:n_inputs]) if o.requires_grad]
        wrt = [t for _, t in _differentiable(args[:n_inputs])]
        grads = autograd_grad(outs, wrt, args[n_inputs:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    del diff
    return gradcheck(first_derivatives, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, fast_mode=fast_mode)
