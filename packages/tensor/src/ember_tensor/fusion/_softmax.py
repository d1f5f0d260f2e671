"""Softmax prologues: a `FusedElementwise` program's values read by eager's softmax
(log_softmax) row kernel as they are computed (CPU, CUDA)."""
import hashlib

from .. import _backends
from .._tensor import Tensor
from ._elementwise import FusedElementwise  # noqa: F401  (the doctest's)
from ._rows import numel

__all__ = ["FusedSoftmax"]

class FusedSoftmax:
    """A `FusedElementwise` program whose values feed softmax or log_softmax (CPU, CUDA).

    ``FusedSoftmax(program, dim=-1)(x, m)`` equals ``program(x, m).softmax(-1)`` bit for
    bit: eager's softmax row kernel (its max, its exp sums in its order) runs on the
    program's values, which are computed for it a block of rows at a time (CPU) or as
    it reads them (CUDA), never stored as a whole. Along a dim that is not the last
    (size-1 dims aside) the program runs as one fused elementwise kernel and then
    eager's softmax (its column kernel).

    Args:
        program: the `FusedElementwise` whose values are normalised (not a comparison).
        dim: the softmax's dim (an int), wrapped per call against the broadcast shape.
        log: log_softmax instead of softmax.

    >>> import ember_tensor as et
    >>> prog = FusedElementwise([("mul", (("in", 0), 2.0))], 1)
    >>> FusedSoftmax(prog, dim=-1)(et.tensor([0., 0.]))
    tensor([0.5000, 0.5000])
    """

    def __init__(self, program, dim, log=False):
        if program.result_is_bool:
            raise ValueError("fusion: a softmax of a comparison's bools is not fused")
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise ValueError(f"fusion: a fused softmax takes an int dim, got {dim!r}")
        self.program = program
        self.dim = dim
        self.log = log
        self.steps = program.steps
        self.name = program.name
        self.result_is_bool = False
        self._kernels = {}   # compute dtype -> (module name, the program's source)

    def compute_dtype(self, tensors):
        """The compute dtype the fused softmax runs `tensors` in, or None when it does not
        take them (see `FusedElementwise.compute_dtype`; also an empty or 0-d broadcast
        shape, a dim out of range): run the eager ops then, which raise their errors."""
        dtype = self.program.compute_dtype(tensors)
        if dtype is None:
            return None
        try:
            shape = self.program.broadcast_shape(tuple(t._data.shape for t in tensors))
        except RuntimeError:
            return None
        if not shape or 0 in shape or not -len(shape) <= self.dim < len(shape):
            return None
        return dtype

    def kernel_name(self, dtype):
        """The generated module's name for `dtype`: a hash of the program and the softmax."""
        text = f"{self.program.source(dtype)}{dtype.np.name}\n{'log_softmax' if self.log else 'softmax'}"
        return "ember_fused_softmax_" + hashlib.sha256(text.encode()).hexdigest()[:20]

    def source(self, dtype):
        """The program's scalar function for `dtype` and, as a comment, the softmax its
        values feed."""
        return (self.program.source(dtype) +
                f"# normalised by eager's row kernel: {'log_softmax' if self.log else 'softmax'}(dim={self.dim})\n")

    def __call__(self, *tensors, dtype=None):
        """softmax (log_softmax) of the program's values on `tensors` (broadcast together)
        into a new tensor.

        Args:
            tensors: the inputs, as `FusedElementwise` takes them, of a non-empty
                broadcast shape of at least one dim.
            dtype: their compute dtype when the caller has it from `compute_dtype`.
        """
        if dtype is None:
            dtype = self.compute_dtype(tensors)
            if dtype is None:
                raise TypeError(f"{self.name}(): a fused softmax takes non-empty tensors of one device and one "
                                f"float dtype (float32 or float64), of at least one dim, and a dim their shape has")
        device = tensors[0]._device
        shape = self.program.broadcast_shape(tuple(t._data.shape for t in tensors))
        axis = self.dim % len(shape)
        if any(n != 1 for n in shape[axis + 1:]):
            # Eager's column kernel walks blocks of columns: the program runs as one fused
            # elementwise kernel, then that softmax.
            values = self.program(*tensors, dtype=dtype)
            return values.log_softmax(axis) if self.log else values.softmax(axis)
        backend = _backends.get(device)
        # (`compute_dtype` took one device and one dtype: no casts; a 0-d operand too is
        # broadcast, every operand a view of the one shape)
        arrays = [t._data for t in tensors]
        arrays = [a if a.shape == shape else backend.storage.broadcast_to(a, shape) for a in arrays]
        size = shape[axis]
        out = backend.storage.empty((numel(shape) // size, size), dtype.np)
        kernel = self._kernels.get(dtype)
        if kernel is None:
            kernel = self._kernels[dtype] = (self.kernel_name(dtype), self.program.source(dtype))
        backend.custom.launch_fused_softmax(kernel[0], kernel[1], self.program.name, self.program._used, dtype.np,
                                            self.log, arrays, axis, out)
        return Tensor._wrap(out.reshape(shape), dtype, device)
