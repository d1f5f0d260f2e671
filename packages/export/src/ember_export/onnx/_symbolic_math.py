"""ONNX forms of elementwise ops, comparisons and matrix products (see _symbolic)."""
import math

import ember_tensor as D

from .._graph import Value
from ._emitter import SymbolicError
from ._symbolic import first, output_of, promoted, symbolic


# --- elementwise --------------------------------------------------------------------------

_UNARY = {"neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "abs": "Abs", "tanh": "Tanh",
          "sigmoid": "Sigmoid", "relu": "Relu", "sin": "Sin", "cos": "Cos", "tan": "Tan", "asin": "Asin",
          "acos": "Acos", "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh",
          "atanh": "Atanh", "erf": "Erf", "floor": "Floor", "ceil": "Ceil", "reciprocal": "Reciprocal",
          "sign": "Sign", "logical_not": "Not", "isnan": "IsNaN", "isinf": "IsInf", "bitwise_not": "Not"}


def _unary(onnx_type):
    def emit(g, node, args):
        dtype = output_of(node).dtype
        x = first(args)
        source_dtype = dtype if onnx_type not in ("Not", "IsNaN", "IsInf") else x.dtype
        return g.op(onnx_type, g.operand(x, source_dtype))
    return emit


for _name, _type in _UNARY.items():
    symbolic(_name, _name + "_")(_unary(_type))


@symbolic("rsqrt", "rsqrt_")
def _rsqrt(g, node, args):
    return g.op("Reciprocal", g.op("Sqrt", g.operand(first(args), output_of(node).dtype)))


@symbolic("square", "square_")
def _square(g, node, args):
    x = g.operand(first(args), output_of(node).dtype)
    return g.op("Mul", x, x)


@symbolic("log2", "log2_", "log10", "log10_")
def _log_base(g, node, args):
    dtype = output_of(node).dtype
    base = 2.0 if node.kind.startswith("log2") else 10.0
    return g.op("Div", g.op("Log", g.operand(first(args), dtype)), g.operand(math.log(base), dtype))


@symbolic("log1p", "log1p_")
def _log1p(g, node, args):
    dtype = output_of(node).dtype
    return g.op("Log", g.op("Add", g.operand(first(args), dtype), g.operand(1, dtype)))


@symbolic("expm1", "expm1_")
def _expm1(g, node, args):
    dtype = output_of(node).dtype
    return g.op("Sub", g.op("Exp", g.operand(first(args), dtype)), g.operand(1, dtype))


_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "true_divide": "Div", "pow": "Pow",
           "maximum": "Max", "minimum": "Min", "fmax": "Max", "fmin": "Min"}


def _binary(onnx_type):
    def emit(g, node, args):
        values = list(args.values())
        a, b = values[0], values[1]
        dtype = output_of(node).dtype
        alpha = args.get("alpha", 1)
        rounding = args.get("rounding_mode")
        left, right = g.operand(a, dtype), g.operand(b, dtype)
        if alpha not in (1, None):
            right = g.op("Mul", right, g.operand(alpha, dtype))
        if onnx_type == "Div" and rounding is not None and dtype.is_floating_point:
            quotient = g.op("Div", left, right)
            return g.op("Floor", quotient) if rounding == "floor" else g.op(
                "Mul", g.op("Sign", quotient), g.op("Floor", g.op("Abs", quotient)))
        return g.op(onnx_type, left, right)
    return emit


for _name, _type in _BINARY.items():
    symbolic(_name, _name + "_")(_binary(_type))

_COMPARE = {"eq": "Equal", "lt": "Less", "le": "LessOrEqual", "gt": "Greater", "ge": "GreaterOrEqual",
            "logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


def _compare(onnx_type):
    def emit(g, node, args):
        a, b = list(args.values())[:2]
        dtype = D.bool if onnx_type in ("And", "Or", "Xor") else promoted(a, b)
        return g.op(onnx_type, g.operand(a, dtype), g.operand(b, dtype))
    return emit


for _name, _type in _COMPARE.items():
    symbolic(_name)(_compare(_type))


def _bitwise(logic, bitwise):
    def emit(g, node, args):
        a, b = list(args.values())[:2]
        dtype = output_of(node).dtype
        if dtype is D.bool:
            return g.op(logic, g.operand(a, dtype), g.operand(b, dtype))
        if g.opset < 18:
            raise SymbolicError(f"ONNX export: {node.kind} on integer tensors (at {node.source}) needs "
                                f"opset_version=18 or newer")
        return g.op(bitwise, g.operand(a, dtype), g.operand(b, dtype))
    return emit


for _name, (_logic, _bits) in {"bitwise_and": ("And", "BitwiseAnd"), "bitwise_or": ("Or", "BitwiseOr"),
                               "bitwise_xor": ("Xor", "BitwiseXor")}.items():
    symbolic(_name)(_bitwise(_logic, _bits))


@symbolic("ne")
def _ne(g, node, args):
    a, b = list(args.values())[:2]
    dtype = promoted(a, b)
    return g.op("Not", g.op("Equal", g.operand(a, dtype), g.operand(b, dtype)))


@symbolic("remainder", "remainder_")
def _remainder(g, node, args):
    a, b = list(args.values())[:2]
    dtype = output_of(node).dtype
    x, y = g.operand(a, dtype), g.operand(b, dtype)
    if not dtype.is_floating_point:
        return g.op("Mod", x, y, fmod=0)
    return g.op("Sub", x, g.op("Mul", g.op("Floor", g.op("Div", x, y)), y))  # Python's sign rule


@symbolic("fmod", "fmod_")
def _fmod(g, node, args):
    a, b = list(args.values())[:2]
    dtype = output_of(node).dtype
    return g.op("Mod", g.operand(a, dtype), g.operand(b, dtype), fmod=1)


@symbolic("where")
def _where(g, node, args):
    cond, x, y = list(args.values())[:3]
    dtype = output_of(node).dtype
    return g.op("Where", g.operand(cond, D.bool), g.operand(x, dtype), g.operand(y, dtype))


@symbolic("clamp", "clamp_", "clip", "clamp_min", "clamp_max")
def _clamp(g, node, args):
    values = list(args.values())
    x = values[0]
    dtype = output_of(node).dtype
    low = args.get("min") if node.kind != "clamp_max" else None
    high = args.get("max") if node.kind != "clamp_min" else None
    if node.kind == "clamp_min":
        low = values[1]
    if node.kind == "clamp_max":
        high = values[1]
    result = g.operand(x, dtype)
    if low is not None:
        result = g.op("Max", result, g.operand(low, dtype))
    if high is not None:
        result = g.op("Min", result, g.operand(high, dtype))
    return result


# --- linear algebra -----------------------------------------------------------------------

@symbolic("matmul", "mm", "bmm", "mv", "dot")
def _matmul(g, node, args):
    a, b = list(args.values())[:2]
    dtype = output_of(node).dtype
    return g.op("MatMul", g.operand(a, dtype), g.operand(b, dtype))


@symbolic("addmm")
def _addmm(g, node, args):
    dtype = output_of(node).dtype
    return g.op("Gemm", g.operand(args["mat1"], dtype), g.operand(args["mat2"], dtype),
                g.operand(args["input"], dtype), alpha=float(args.get("alpha", 1)), beta=float(args.get("beta", 1)))


@symbolic("linear")
def _linear(g, node, args):
    values = list(args.values())
    x, weight = values[0], values[1]
    bias = values[2] if len(values) > 2 else None
    dtype = output_of(node).dtype
    out = g.op("MatMul", g.operand(x, dtype), g.op("Transpose", g.operand(weight, dtype), perm=[1, 0]))
    return g.op("Add", out, g.operand(bias, dtype)) if isinstance(bias, Value) else out


@symbolic("outer")
def _outer(g, node, args):
    a, b = list(args.values())[:2]
    dtype = output_of(node).dtype
    return g.op("Mul", g.op("Unsqueeze", g.operand(a, dtype), g.ints([1])),
                g.op("Unsqueeze", g.operand(b, dtype), g.ints([0])))


