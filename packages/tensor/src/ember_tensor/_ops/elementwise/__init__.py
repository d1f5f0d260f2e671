"""Elementwise ops: the arithmetic core (operators, the unary/binary runners every
elementwise op uses) in `arithmetic`, comparisons, logical and bitwise ops in `logic`, the
one-operand math functions in `pointwise`, the three-operand and composite ops in
`composite`; this package is their one namespace.
"""
from .arithmetic import *  # noqa: F401,F403
from .arithmetic import copy_to_out  # noqa: F401 - used by the ops with out=
from .logic import *  # noqa: F401,F403
from .pointwise import *  # noqa: F401,F403
from .composite import *  # noqa: F401,F403
from .logs_powers import *  # noqa: F401,F403
from .integer import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .complex_numbers import *  # noqa: F401,F403
from .special import polygamma  # noqa: F401 - n first: its Tensor method is set in methods.py
from . import arithmetic, complex_numbers, composite, integer, logic, logs_powers, pointwise, special

_MODULES = (arithmetic, logic, pointwise, composite, logs_powers, integer, special, complex_numbers)  # where the ops are defined (Tensor methods come from them)
del arithmetic, complex_numbers, composite, integer, logic, logs_powers, pointwise, special  # the submodules are not ops of the namespace

# PyTorch's alternative names.
true_divide, true_divide_ = div, div_
multiply, multiply_, subtract, subtract_, divide, divide_ = mul, mul_, sub, sub_, div, div_
negative, negative_, absolute, absolute_ = neg, neg_, abs, abs_
arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2
arcsinh, arccosh, arctanh = asinh, acosh, atanh
arcsin_, arccos_, arctan_, arctan2_ = asin_, acos_, atan_, atan2_
arcsinh_, arccosh_, arctanh_ = asinh_, acosh_, atanh_
fix, fix_ = trunc, trunc_
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
