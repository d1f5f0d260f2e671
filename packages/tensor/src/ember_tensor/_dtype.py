"""dtype objects and PyTorch's type-promotion rules.

A `dtype` wraps the NumPy dtype that stores its elements. bfloat16 and the float8 types
come from `ml_dtypes` (NumPy has none); kernels compute float16, bfloat16 and float8 in
float32. complex64 and complex128 are NumPy's; complex32 (two float16s, which NumPy lacks)
is stored as a structured pair and computes in complex64.
"""
import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
    "int64", "uint8", "bool", "half", "float", "double", "short", "int", "long",
    "complex32", "complex64", "complex128", "chalf", "cfloat", "cdouble",
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "get_default_dtype", "set_default_dtype", "promote_types", "result_type", "can_cast",
]

# Categories order promotion between kinds: bool < integer < floating < complex.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


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
        return self.category == _COMPLEX

    def to_real(self):
        """The real dtype of a complex dtype's parts (complex64 -> float32); others: itself."""
        return _REAL_OF.get(self, self)

    def to_complex(self):
        """The complex dtype whose parts are this float dtype (float32 -> complex64).

        Complex dtypes return themselves; integer and bool dtypes raise, as in PyTorch.
        """
        if self.category == _COMPLEX:
            return self
        found = _COMPLEX_OF.get(self)
        if found is None:
            raise RuntimeError(f"Unknown Complex ScalarType for {_SCALAR_TYPE_NAMES[self.name]}")
        return found

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

# complex32 has no NumPy type: its storage is a (real, imag) pair of float16s.
COMPLEX32_NP = np.dtype([("real", np.float16), ("imag", np.float16)])
complex32 = dtype("complex32", COMPLEX32_NP, _COMPLEX, True, "ComplexHalfTensor")
complex64 = dtype("complex64", np.complex64, _COMPLEX, True, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, _COMPLEX, True, "ComplexDoubleTensor")
# float8: storage and casts (PyTorch itself has almost no kernels for them).
float8_e4m3fn = dtype("float8_e4m3fn", ml_dtypes.float8_e4m3fn, _FLOAT, True, "Float8_e4m3fnTensor")
float8_e5m2 = dtype("float8_e5m2", ml_dtypes.float8_e5m2, _FLOAT, True, "Float8_e5m2Tensor")
float8_e4m3fnuz = dtype("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, _FLOAT, True, "Float8_e4m3fnuzTensor")
float8_e5m2fnuz = dtype("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, _FLOAT, True, "Float8_e5m2fnuzTensor")

half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
chalf, cfloat, cdouble = complex32, complex64, complex128

FLOAT8_DTYPES = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz)
COMPLEX_DTYPES = (complex32, complex64, complex128)
ALL_DTYPES = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool,
              complex32, complex64, complex128) + FLOAT8_DTYPES
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d.np: d for d in ALL_DTYPES}
_REAL_OF = {complex32: float16, complex64: float32, complex128: float64}
_COMPLEX_OF = {float16: complex32, bfloat16: complex64, float32: complex64, float64: complex128}

# PyTorch's c10 ScalarType names, which its error messages quote.
_SCALAR_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex32": "ComplexHalf", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
    "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz"}


def scalar_type_name(d):
    """PyTorch's ScalarType name of `d`, as its errors spell it ('Float', 'ComplexFloat')."""
    return _SCALAR_TYPE_NAMES[d.name]


def _dtype_by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype):
    """The ember dtype storing elements like `np_dtype`; TypeError if ember has none."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
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
    if obj is builtins.complex:
        return default_complex_dtype()
    return from_numpy_dtype(obj)


_default_dtype = float32


def get_default_dtype():
    """The dtype of floating tensors made from Python floats (float32 unless changed)."""
    return _default_dtype


def default_complex_dtype():
    """The dtype of complex tensors made from Python complex numbers: the complex type
    of the default float dtype (complex64 for float32, complex128 for float64)."""
    return _default_dtype.to_complex()


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
    if a in FLOAT8_DTYPES or b in FLOAT8_DTYPES:
        return None  # PyTorch refuses every mix with a float8 type (see `_promote`)
    if a.category == _COMPLEX or b.category == _COMPLEX:
        # Complex wins, with the wider of the two precisions: float64 + complex64 -> complex128.
        a = a.to_complex() if a.category == _FLOAT else a
        b = b.to_complex() if b.category == _FLOAT else b
        if a.category != b.category:
            return a if a.category > b.category else b
        return a if a.itemsize >= b.itemsize else b
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


_PROMOTION = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES
              if _promote_pair(a, b) is not None}


def _promote(a, b):
    """The promoted dtype of a pair; PyTorch's error for a mix with a float8 type."""
    try:
        return _PROMOTION[(a, b)]
    except KeyError:
        raise RuntimeError(
            "Promotion for Float8 Types is not supported, attempted to promote "
            f"{scalar_type_name(a)} and {scalar_type_name(b)}") from None


def promote_types(type1, type2):
    """The smallest dtype both `type1` and `type2` can be converted to without losing kind.

    >>> promote_types(float64, complex64)
    torch.complex128
    """
    return _promote(to_dtype(type1), to_dtype(type2))


def scalar_dtype(value):
    """The dtype a Python scalar takes when it is wrapped into a tensor."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.float):
        return _default_dtype
    if isinstance(value, builtins.complex):
        return default_complex_dtype()
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def _combine_categories(higher, lower):
    # A lower-priority operand only matters when it is of a higher category; a complex one
    # keeps a float operand's precision (float64 tensor * 1j -> complex128).
    if higher is None:
        return lower
    if lower is None or higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:
        return higher.to_complex() if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher is bool or lower.category == _FLOAT:
        return _promote(higher, lower)
    return higher


def result_type_of(operands):
    """PyTorch's result type for a mix of tensors and Python scalars.

    Tensors with dimensions decide first; 0-d tensors and then Python scalars only
    raise the result when they are of a higher category (bool < int < float < complex),
    and a Python float then contributes the default dtype, not float64 (a Python complex:
    the default complex dtype).
    """
    dim_result = zero_result = wrapped_result = None
    for x in operands:
        d = getattr(x, "_dtype", None)
        if d is not None:
            if x._data.ndim:
                dim_result = d if dim_result is None else _promote(dim_result, d)
            else:
                zero_result = d if zero_result is None else _promote(zero_result, d)
        elif x is not None:
            d = scalar_dtype(x)
            if not isinstance(x, np.generic):
                d = {_BOOL: bool, _INT: int64, _FLOAT: _default_dtype,
                     _COMPLEX: default_complex_dtype()}[d.category]
            wrapped_result = d if wrapped_result is None else _promote(wrapped_result, d)
    return _combine_categories(dim_result, _combine_categories(zero_result, wrapped_result))


def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on `tensor1` and `tensor2` (tensors or numbers) returns."""
    return result_type_of((tensor1, tensor2))


def can_cast(from_, to):
    """Whether casting `from_` to `to` is allowed by PyTorch's casting rules (no kind downgrade)."""
    from_, to = to_dtype(from_), to_dtype(to)
    return from_.category <= to.category
