"""dtype objects and PyTorch's type-promotion rules.

A `dtype` wraps the NumPy dtype that stores its elements. bfloat16 comes from
`ml_dtypes` (NumPy has none); kernels compute float16 and bfloat16 in float32.
"""
import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
    "int64", "uint8", "bool", "half", "float", "double", "short", "int", "long",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast",
]

# Categories order promotion between kinds: bool < integer < floating.
_BOOL, _INT, _FLOAT = 0, 1, 2


class dtype:
    """A tensor element type, like ``torch.dtype``: ``ember_tensor.float32`` ..."""

    __slots__ = ("name", "np", "itemsize", "category", "is_signed", "_tensor_type")

    def __init__(self, name, np_dtype, category, is_signed, tensor_type):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_signed = is_signed
        self._tensor_type = tensor_type

    @property
    def is_floating_point(self):
        return self.category == _FLOAT

    @property
    def is_complex(self):
        return False

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        # Pickle by name so that a saved tensor restores the very same dtype object.
        return (_dtype_by_name, (self.name,))


float16 = dtype("float16", np.float16, _FLOAT, True, "HalfTensor")
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, True, "BFloat16Tensor")
float32 = dtype("float32", np.float32, _FLOAT, True, "FloatTensor")
float64 = dtype("float64", np.float64, _FLOAT, True, "DoubleTensor")
int8 = dtype("int8", np.int8, _INT, True, "CharTensor")
int16 = dtype("int16", np.int16, _INT, True, "ShortTensor")
int32 = dtype("int32", np.int32, _INT, True, "IntTensor")
int64 = dtype("int64", np.int64, _INT, True, "LongTensor")
uint8 = dtype("uint8", np.uint8, _INT, False, "ByteTensor")
bool = dtype("bool", np.bool_, _BOOL, False, "BoolTensor")  # noqa: A001 - PyTorch's name

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001

ALL_DTYPES = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np: d for d in ALL_DTYPES}


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    """The ember dtype storing elements like `np_dtype`; TypeError if ember has none."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
            "float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, and bool."
        ) from None


def to_dtype(obj):
    """Accept an ember dtype, a NumPy dtype/type or a Python type (float, int, bool)."""
    if obj.__class__ is dtype:
        return obj
    if obj is builtins.float:
        return _default_dtype
    if obj is builtins.int:
        return int64
    if obj is builtins.bool:
        return bool
    return from_numpy_dtype(obj)


_default_dtype = float32


def get_default_dtype():
    """The dtype of floating tensors made from Python floats (float32 unless changed)."""
    return _default_dtype


def set_default_dtype(d):
    """Set the default floating dtype; only floating dtypes are allowed, as in PyTorch."""
    global _default_dtype
    d = to_dtype(d)
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype = d


def _promote_pair(a, b):
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.category == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    if a.category == _INT:
        # uint8 with a signed type needs a wider signed type (uint8 + int8 -> int16).
        if a is uint8 or b is uint8:
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a.itemsize > b.itemsize else b
    return a


_PROMOTION = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


def promote_types(type1, type2):
    """The smallest dtype both `type1` and `type2` can be converted to without losing kind."""
    return _PROMOTION[(to_dtype(type1), to_dtype(type2))]


def scalar_dtype(value):
    """The dtype a Python scalar takes when it is wrapped into a tensor."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.float):
        return _default_dtype
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def _combine_categories(higher, lower):
    # A lower-priority operand only matters when it is of a higher category.
    if higher is None:
        return lower
    if lower is None or higher.category == _FLOAT:
        return higher
    if higher is bool or lower.category == _FLOAT:
        return _PROMOTION[(higher, lower)]
    return higher


def result_type_of(operands):
    """PyTorch's result type for a mix of tensors and Python scalars.

    Tensors with dimensions decide first; 0-d tensors and then Python scalars only
    raise the result when they are of a higher category (bool < int < float), and a
    Python float then contributes the default dtype, not float64.
    """
    dim_result = zero_result = wrapped_result = None
    for x in operands:
        d = getattr(x, "_dtype", None)
        if d is not None:
            if x._data.ndim:
                dim_result = d if dim_result is None else _PROMOTION[(dim_result, d)]
            else:
                zero_result = d if zero_result is None else _PROMOTION[(zero_result, d)]
        elif x is not None:
            d = scalar_dtype(x)
            if not isinstance(x, np.generic):
                d = {_BOOL: bool, _INT: int64, _FLOAT: _default_dtype}[d.category]
            wrapped_result = d if wrapped_result is None else _PROMOTION[(wrapped_result, d)]
    return _combine_categories(dim_result, _combine_categories(zero_result, wrapped_result))


def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on `tensor1` and `tensor2` (tensors or numbers) returns."""
    return result_type_of((tensor1, tensor2))


def can_cast(from_, to):
    """Whether casting `from_` to `to` is allowed by PyTorch's casting rules (no kind downgrade)."""
    from_, to = to_dtype(from_), to_dtype(to)
    return from_.category <= to.category
