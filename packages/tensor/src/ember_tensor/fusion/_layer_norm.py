"""Layer norm prologues: a `FusedElementwise` program's values normalised over their
trailing dims by eager's layer norm row kernel as they are computed (CPU, CUDA)."""
import hashlib

from .. import _backends
from .._tensor import Tensor
from ._elementwise import FusedElementwise  # noqa: F401  (the doctest's)
from ._rows import numel

__all__ = ["FusedLayerNorm"]


class FusedLayerNorm:
    """A `FusedElementwise` program whose values feed layer norm (CPU, CUDA).

    ``FusedLayerNorm(program, (d,), 1e-5, weight=True, bias=True)(x, r, w, b)`` equals
    ``F.layer_norm(program(x, r), (d,), w, b, 1e-5)`` bit for bit: eager's layer norm row
    kernel (its float64 statistics, its order of sums) runs on the program's values,
    which are computed for it a block of rows at a time (CPU) or as it reads them
    (CUDA), never stored as a whole. Only the output is made: the mean and rstd eager
    also returns are for its backward, which a fused group recomputes.

    Args:
        program: the `FusedElementwise` whose values are normalised (not a comparison).
        normalized_shape: the trailing dims normalised (a tuple of ints).
        eps: added to the variance.
        weight: whether the weight (of `normalized_shape`) follows the program's inputs.
        bias: whether the bias follows them (after the weight, if any).

    >>> import ember_tensor as et
    >>> prog = FusedElementwise([("add", (("in", 0), ("in", 1)))], 2)
    >>> FusedLayerNorm(prog, (2,), 0.0)(et.tensor([1., 2.]), et.tensor([2., 3.]))
    tensor([-1.,  1.])
    """

    def __init__(self, program, normalized_shape, eps, weight=False, bias=False):
        if program.result_is_bool:
            raise ValueError("fusion: a layer norm of a comparison's bools is not fused")
        shape = tuple(normalized_shape)
        if not shape or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape):
            raise ValueError(f"fusion: a fused layer norm takes a non-empty shape of positive ints, got {shape!r}")
        self.program = program
        self.normalized_shape = shape
        self.eps = float(eps)
        self.weight = bool(weight)
        self.bias = bool(bias)
        self.steps = program.steps
        self.name = program.name
        self.result_is_bool = False
        self._kernels = {}   # compute dtype -> (module name, the program's source)

    def compute_dtype(self, tensors):
        """The compute dtype the fused layer norm runs `tensors` in (the program's inputs,
        then the weight and bias), or None when it does not take them (see
        `FusedElementwise.compute_dtype`; also an empty broadcast shape, one whose trailing
        dims are not `normalized_shape`, a weight or bias of another shape, dtype or
        device): run the eager ops then, which raise their errors."""
        n = self.program.n_inputs
        if len(tensors) != n + self.weight + self.bias:
            return None
        dtype = self.program.compute_dtype(tensors[:n])
        if dtype is None:
            return None
        device = tensors[0]._device
        for t in tensors[n:]:
            if not isinstance(t, Tensor) or t._dtype is not dtype or t._device != device \
                    or tuple(t._data.shape) != self.normalized_shape:
                return None
        try:
            shape = self.program.broadcast_shape(tuple(t._data.shape for t in tensors[:n]))
        except RuntimeError:
            return None
        k = len(self.normalized_shape)
        if 0 in shape or len(shape) < k or tuple(shape[len(shape) - k:]) != self.normalized_shape:
            return None
        return dtype

    def kernel_name(self, dtype):
        """The generated module's name for `dtype`: a hash of the program and the norm."""
        text = f"{self.program.source(dtype)}{dtype.np.name}\nlayer_norm"
        return "ember_fused_layer_norm_" + hashlib.sha256(text.encode()).hexdigest()[:20]

    def source(self, dtype):
        """The program's scalar function for `dtype` and, as a comment, the layer norm its
        values feed."""
        return (self.program.source(dtype) +
                f"# normalised by eager's row kernel: layer_norm({list(self.normalized_shape)}, "
                f"weight={self.weight}, bias={self.bias}, eps={self.eps!r})\n")

    def __call__(self, *tensors, dtype=None):
        """layer_norm of the program's values on the program's inputs (broadcast together)
        with the weight and bias that follow them, into a new tensor.

        Args:
            tensors: the program's inputs, as `FusedElementwise` takes them, of a non-empty
                broadcast shape ending in `normalized_shape`; then the weight and the bias
                when the norm has them.
            dtype: their compute dtype when the caller has it from `compute_dtype`.
        """
        if dtype is None:
            dtype = self.compute_dtype(tensors)
            if dtype is None:
                raise TypeError(f"{self.name}(): a fused layer norm takes non-empty tensors of one device and one "
                                f"float dtype (float32 or float64) ending in {list(self.normalized_shape)}, "
                                f"then the weight and bias of that shape it was made with")
        n = self.program.n_inputs
        inputs, affine = tensors[:n], tensors[n:]
        device = inputs[0]._device
        shape = self.program.broadcast_shape(tuple(t._data.shape for t in inputs))
        backend = _backends.get(device)
        # (`compute_dtype` took one device and one dtype: no casts; a 0-d operand too is
        # broadcast, every operand a view of the one shape)
        arrays = [t._data for t in inputs]
        arrays = [a if a.shape == shape else backend.storage.broadcast_to(a, shape) for a in arrays]
        weight = affine[0]._data if self.weight else None
        bias = affine[-1]._data if self.bias else None
        size = numel(self.normalized_shape)
        out = backend.storage.empty((numel(shape) // size, size), dtype.np)
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = (self.kernel_name(dtype), self.program.source(dtype))
        backend.custom.launch_fused_layer_norm(kernel[0], kernel[1], self.program.name, self.program._used,
                                               dtype.np, arrays, len(self.normalized_shape), weight, bias,
                                               self.eps, out)
        return Tensor._wrap(out.reshape(shape), dtype, device)
