"""FLOPs of one op call, by PyTorch's profiler formulas (``with_flops=True``).

PyTorch counts only a few ops (torch/csrc/profiler/util.cpp, ``computeFlops``): a GEMM
is 2·M·K·N (one multiply and one add per term, alpha and beta taken as 1), a 2-d
convolution 2·N·Hout·Wout·Kh·Kw·Cin·Cout/groups, an elementwise ``mul``/``add`` the number
of elements of its first argument; every other op counts 0. ember records a matrix product
as one ``aten::matmul`` event where PyTorch's ``matmul`` calls ``mm``/``bmm``, and a 2-d
convolution as ``aten::convolution`` where PyTorch has ``aten::conv2d``: those events carry
the count that PyTorch puts on the op below them, so the totals agree.
"""
import math

from ember_tensor import Tensor

__all__ = ["op_flops"]


def _gemm(a, b):
    """2·M·K·N for a (..., M, K) @ (K, N) product, PyTorch's count for mm/addmm."""
    if not a or not a[-1]:
        return 0
    return 2 * math.prod(a) // a[-1] * math.prod(b)


def _batched_gemm(a, b):
    """2·B·M·K·N for (B, M, K) @ (B, K, N), PyTorch's count for bmm/baddbmm."""
    if not a or not a[0] or not a[-1]:
        return 0
    return 2 * math.prod(a) // a[-1] // a[0] * math.prod(b)


def _shape(x):
    return tuple(x.shape) if isinstance(x, Tensor) else None


def _arg(args, kwargs, index, name, default=None):
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _pair(value):
    if isinstance(value, int):
        return (value, value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return tuple(value)
    return None  # 'same'/'valid': PyTorch's count needs integers and gives 0


def _mm(args, kwargs):
    a, b = _shape(_arg(args, kwargs, 0, "input")), _shape(_arg(args, kwargs, 1, "mat2"))
    return _gemm(a, b) if a and b else 0


def _addmm(args, kwargs):
    a, b = _shape(_arg(args, kwargs, 1, "mat1")), _shape(_arg(args, kwargs, 2, "mat2"))
    return _gemm(a, b) if a and b else 0


def _bmm(args, kwargs):
    a, b = _shape(_arg(args, kwargs, 0, "input")), _shape(_arg(args, kwargs, 1, "mat2"))
    return _batched_gemm(a, b) if a and b else 0


def _baddbmm(args, kwargs):
    a, b = _shape(_arg(args, kwargs, 1, "batch1")), _shape(_arg(args, kwargs, 2, "batch2"))
    return _batched_gemm(a, b) if a and b else 0


def _matmul(args, kwargs):
    """The count of the mm/bmm PyTorch's matmul runs: 2·batch·M·K·N, a vector on the left
    taken as one row; a vector on the right goes to mv/dot, which count 0."""
    a, b = _shape(_arg(args, kwargs, 0, "input")), _shape(_arg(args, kwargs, 1, "other"))
    if a is None or b is None or len(b) < 2 or not a:
        return 0
    if len(a) == 1:
        a = (1,) + a
    batch = math.prod(_broadcast(a[:-2], b[:-2]))
    return 2 * batch * a[-2] * a[-1] * b[-1]


def _broadcast(a, b):
    width = max(len(a), len(b))
    a, b = (1,) * (width - len(a)) + a, (1,) * (width - len(b)) + b
    return tuple(max(x, y) for x, y in zip(a, b))


def _elementwise(args, kwargs):
    a = _shape(_arg(args, kwargs, 0, "input"))
    return math.prod(a) if a is not None else 0


def _conv2d(args, kwargs):
    x, w = _shape(_arg(args, kwargs, 0, "input")), _shape(_arg(args, kwargs, 1, "weight"))
    transposed = _arg(args, kwargs, 6, "transposed", False)
    if x is None or w is None or len(x) != 4 or len(w) != 4 or transposed:
        return 0  # PyTorch counts aten::conv2d only: not 1-d/3-d nor transposed convolutions
    stride = _pair(_arg(args, kwargs, 3, "stride", 1))
    padding = _pair(_arg(args, kwargs, 4, "padding", 0))
    dilation = _pair(_arg(args, kwargs, 5, "dilation", 1))
    groups = _arg(args, kwargs, 8, "groups", 1)
    if None in (stride, padding, dilation) or not groups or 0 in stride:
        return 0
    n, c_in, h, wd = x
    c_out, _, kh, kw = w
    out_h = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    out_w = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    return 2 * n * out_h * out_w * kh * kw * c_in * c_out // groups


_FORMULAS = {
    "aten::mm": _mm, "aten::addmm": _addmm, "aten::bmm": _bmm, "aten::baddbmm": _baddbmm,
    "aten::matmul": _matmul, "aten::mul": _elementwise, "aten::add": _elementwise,
    "aten::conv2d": _conv2d, "aten::convolution": _conv2d,
}


def op_flops(name, args, kwargs):
    """FLOPs of the op called `name` ("aten::mm") on `args`, 0 for ops PyTorch does not count.

    >>> import ember_tensor as et
    >>> op_flops("aten::mm", (et.ones(64, 32), et.ones(32, 16)), {})
    65536
    """
    formula = _FORMULAS.get(name)
    return formula(args, kwargs) if formula is not None else 0
