"""Attach ops to Tensor as methods and Python operators, like torch.Tensor's."""
from .._dispatch import Operator, method as _operator_method
from .._tensor import Tensor
from . import convert, creation, elementwise, indexing, linalg, pinned, random, reduction, reduction_stats, views
from . import shared
from . import shape_ops
from .linalg import legacy as linalg_legacy, products as linalg_products
from . import index_ops, scans, sorting
from . import aliases, combinatorics, quantiles, statistics, view_scatters, view_splits, views_inplace
from . import complex_views
from .signal import stft as _stft

# Functions of these modules that take the tensor first become methods of the same name.
_METHOD_MODULES = (elementwise, *elementwise._MODULES, views, convert, linalg_products, random, reduction, reduction_stats,
                  pinned, shared, shape_ops,
                  index_ops, sorting, scans, linalg_legacy, quantiles, views_inplace, combinatorics,
                  statistics, aliases, view_scatters, view_splits, complex_views, _stft)
_NOT_METHODS = {"binary", "unary", "copy_to_out", "make_view", "view_strides", "contiguous_strides",
                "broadcast_shapes", "broadcast_tensors", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d",
                "block_diag", "where", "isclose", "allclose", "equal", "clip", "clip_",
                # random ops that are not Tensor methods in PyTorch
                "rand", "randn", "randint", "randperm", "normal", "poisson", "rand_like",
                "randn_like", "randint_like",
                # reductions that are not Tensor methods in PyTorch
                "var_mean", "std_mean",
                # index builders that are not Tensor methods in PyTorch
                "triu_indices", "tril_indices", "unravel_index", "cartesian_prod", "combinations", "vander",
                "isin", "cdist", "histogramdd",
                # stacking helpers that are not Tensor methods in PyTorch
                "column_stack", "dstack",
                # a top-level function only (the method is fill_)
                "fill", "typename", "rsub",
                # complex views that are functions only (real/imag are properties, below)
                "view_as_real", "view_as_complex", "view_as_real_copy", "view_as_complex_copy", "real", "imag",
                "polar", "complex", "is_complex"}


def _public_functions(module):
    for name, obj in vars(module).items():
        if name.startswith("_") or name in _NOT_METHODS:
            continue
        if isinstance(obj, Operator) or (callable(obj) and getattr(obj, "__module__", "") == module.__name__
                                         and not isinstance(obj, type)):
            yield name, obj


def _method(name, fn):
    # An Operator becomes a plain function calling it (`_dispatch.method`): Python binds a
    # function found on the type in C, where an Operator would make a bound method through
    # its Python __get__ on every `x.exp()`.
    if isinstance(fn, Operator):
        return _operator_method(fn, name, _OPERATOR_ARITY.get(name))
    return fn


def install():
    """Attach every method and operator to Tensor (runs once at import)."""
    for module in _METHOD_MODULES:
        for name, fn in _public_functions(module):
            if not hasattr(Tensor, name) or name in ("type", "float", "int", "bool", "long"):
                setattr(Tensor, name, _method(name, fn))
    E = elementwise
    extra = {
        "where": lambda self, condition, y: E.where(condition, self, y),
        "isclose": E.isclose, "allclose": E.allclose, "equal": E.equal,
        "clip": E.clamp, "clip_": E.clamp_,
        "new_tensor": creation.new_tensor, "new_empty": creation.new_empty,
        "new_zeros": creation.new_zeros, "new_ones": creation.new_ones, "new_full": creation.new_full,
        # PyTorch's in-place spellings of the comparison aliases (greater, less, ...)
        "greater_": E.gt_, "greater_equal_": E.ge_, "less_": E.lt_, "less_equal_": E.le_, "not_equal_": E.ne_,
        "polygamma": lambda self, n: E.polygamma(n, self),
        "is_nonzero": lambda self: bool(self),  # bool() raises for more or fewer than one element, as PyTorch
        "view_as": views.view_as, "reshape_as": views.reshape_as, "expand_as": views.expand_as,
        "__getitem__": indexing.getitem, "__setitem__": indexing._setitem,
        # Python operators
        # PyTorch's __radd__ is add(self, other): with complex numbers the order shows at an
        # infinite part (add's second operand is multiplied by alpha = 1 + 0j).
        "__add__": E.add, "__radd__": lambda self, other: E.add(self, other),
        "__iadd__": E.add_,
        "__sub__": E.sub, "__rsub__": lambda self, other: E.sub(other, self), "__isub__": E.sub_,
        "__mul__": E.mul, "__rmul__": lambda self, other: E.mul(other, self), "__imul__": E.mul_,
        "__truediv__": E.div, "__rtruediv__": lambda self, other: E.div(other, self),
        "__itruediv__": E.div_,
        "__floordiv__": E.floor_divide, "__rfloordiv__": lambda self, other: E.floor_divide(other, self),
        "__ifloordiv__": E.floor_divide_,
        "__mod__": E.remainder, "__rmod__": lambda self, other: E.remainder(other, self),
        "__imod__": E.remainder_,
        "__pow__": E.pow, "__rpow__": lambda self, other: E.pow(other, self), "__ipow__": E.pow_,
        "__matmul__": linalg.matmul, "__rmatmul__": lambda self, other: linalg.matmul(other, self),
        "__and__": E.bitwise_and, "__rand__": lambda self, other: E.bitwise_and(other, self),
        "__iand__": E.bitwise_and_,
        "__or__": E.bitwise_or, "__ror__": lambda self, other: E.bitwise_or(other, self),
        "__ior__": E.bitwise_or_,
        "__xor__": E.bitwise_xor, "__rxor__": lambda self, other: E.bitwise_xor(other, self),
        "__ixor__": E.bitwise_xor_,
        "__lshift__": E.bitwise_left_shift, "__rlshift__": lambda self, other: E.bitwise_left_shift(other, self),
        "__ilshift__": E.bitwise_left_shift_,
        "__rshift__": E.bitwise_right_shift, "__rrshift__": lambda self, other: E.bitwise_right_shift(other, self),
        "__irshift__": E.bitwise_right_shift_,
        "__eq__": E.eq, "__ne__": E.ne, "__lt__": E.lt, "__le__": E.le, "__gt__": E.gt, "__ge__": E.ge,
        "__neg__": E.neg, "__pos__": E.positive, "__abs__": E.abs, "__invert__": E.bitwise_not,
    }
    for name, fn in extra.items():
        setattr(Tensor, name, _method(name, fn))
    Tensor.T = property(views._full_reverse, doc="All dims reversed (a matrix's transpose).")
    Tensor.mT = property(views._matrix_transpose, doc="Transpose of the last two dims.")
    Tensor.H = property(
        lambda self: E.conj(views._matrix_transpose(self) if self.dim() > 2 else views.t(self)),
        doc="Conjugate transpose of a matrix (a copy for complex: conj is eager).")
    Tensor.mH = property(lambda self: E.conj(views._matrix_transpose(self)),
                         doc="Conjugate transpose of the last two dims (a copy for complex: conj is eager).")
    Tensor.real = property(complex_views.real, _set_real, doc="The real parts (a view); a real tensor itself.")
    Tensor.imag = property(complex_views.imag, _set_imag, doc="The imaginary parts (a view) of a complex tensor.")
    Tensor.data = convert.data
    Tensor.layout = property(lambda self: _strided(), doc="The memory layout: strided.")
    Tensor.__hash__ = lambda self: id(self)


# The Python operators that call one op with the tensor first, by their arity: their
# methods (`_dispatch.method`) take exactly that many arguments, no packing.
_OPERATOR_ARITY = {**{f"__{name}__": 2 for name in (
    "add", "iadd", "sub", "isub", "mul", "imul", "truediv", "itruediv", "floordiv", "ifloordiv", "mod", "imod",
    "pow", "ipow", "matmul", "and", "iand", "or", "ior", "xor", "ixor", "lshift", "ilshift", "rshift", "irshift",
    "eq", "ne", "lt", "le", "gt", "ge", "getitem")},
    **{f"__{name}__": 1 for name in ("neg", "pos", "abs", "invert")}, "__setitem__": 3}


def _set_real(self, value):
    complex_views.real(self).copy_(value if isinstance(value, Tensor) else creation.tensor(value))


def _set_imag(self, value):
    complex_views.imag(self).copy_(value if isinstance(value, Tensor) else creation.tensor(value))


def _strided():
    from .._layout import strided
    return strided
