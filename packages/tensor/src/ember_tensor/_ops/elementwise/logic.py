"""Comparisons, logical and bitwise ops: the binary ops whose result is a bool tensor or
works on the bits of integers, built on `arithmetic`'s runners and dtype rules."""
from ... import _dtype as D
from ..._dispatch import op
from .arithmetic import _BOOL, _FLOATS, _binary_inplace, _binary_op, _reject_dtypes, binary


eq = _binary_op("eq", _BOOL, "input == other elementwise, as a bool tensor.")
ne = _binary_op("ne", _BOOL, "input != other elementwise.")
lt = _binary_op("lt", _BOOL, "input < other elementwise.")
le = _binary_op("le", _BOOL, "input <= other elementwise.")
gt = _binary_op("gt", _BOOL, "input > other elementwise.")
ge = _binary_op("ge", _BOOL, "input >= other elementwise.")
eq_, ne_, lt_, le_, gt_, ge_ = (_binary_inplace(n, _BOOL) for n in ("eq", "ne", "lt", "le", "gt", "ge"))

logical_and = _binary_op("logical_and", _BOOL, "Elementwise logical AND (nonzero is True).", tensors_only=True)
logical_or = _binary_op("logical_or", _BOOL, "Elementwise logical OR.", tensors_only=True)
logical_xor = _binary_op("logical_xor", _BOOL, "Elementwise logical XOR.", tensors_only=True)
logical_and_, logical_or_, logical_xor_ = (
    _binary_inplace(n, _BOOL, tensors_only=True) for n in ("logical_and", "logical_or", "logical_xor"))


# PyTorch's kernel names in the dtype error, and the dtypes each kernel refuses.
_BITWISE_KERNELS = {"bitwise_and": ("bitwise_and_cpu", _FLOATS), "bitwise_or": ("bitwise_or_cpu", _FLOATS),
                    "bitwise_xor": ("bitwise_xor_cpu", _FLOATS),
                    "bitwise_left_shift": ("lshift_cpu", _FLOATS + (D.bool,)),
                    "bitwise_right_shift": ("rshift_cpu", _FLOATS + (D.bool,))}


def _check_bitwise(name, a, b):
    kernel, rejected = _BITWISE_KERNELS[name]
    _reject_dtypes(kernel, D.result_type_of((a, b)), rejected, a, b)


def _bitwise_op(name, doc):
    def fn(input, other, *, out=None):
        _check_bitwise(name, input, other)
        return binary(name, input, other, out)
    fn.__name__ = name
    fn.__doc__ = doc
    return op(name)(fn)


def _bitwise_inplace(name):
    def fn(self, other):
        _check_bitwise(name, self, other)
        return binary(name, self, other, inplace=True)
    fn.__name__ = name + "_"
    fn.__doc__ = f"In-place `{name}`."
    return op(name + "_", inplace=True)(fn)


bitwise_and = _bitwise_op("bitwise_and", "Elementwise AND of integer or bool tensors.")
bitwise_or = _bitwise_op("bitwise_or", "Elementwise OR of integer or bool tensors.")
bitwise_xor = _bitwise_op("bitwise_xor", "Elementwise XOR of integer or bool tensors.")
bitwise_left_shift = _bitwise_op("bitwise_left_shift", "input << other for integer tensors.")
bitwise_right_shift = _bitwise_op("bitwise_right_shift", "input >> other for integer tensors.")
bitwise_and_, bitwise_or_, bitwise_xor_, bitwise_left_shift_, bitwise_right_shift_ = (
    _bitwise_inplace(n) for n in ("bitwise_and", "bitwise_or", "bitwise_xor",
                                  "bitwise_left_shift", "bitwise_right_shift"))
