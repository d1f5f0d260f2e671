"""Building an ONNX graph from a trace: names, constants, dtypes, and the node list."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

from .._graph import Value

__all__ = ["Emitter", "ONNX_DTYPES", "SymbolicError"]

ONNX_DTYPES = {"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE, "float16": TensorProto.FLOAT16,
               "bfloat16": TensorProto.BFLOAT16, "int64": TensorProto.INT64, "int32": TensorProto.INT32,
               "int16": TensorProto.INT16, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8,
               "bool": TensorProto.BOOL}


class SymbolicError(RuntimeError):
    """An op the exporter cannot express in ONNX."""


class Emitter:
    """Collects ONNX nodes and initializers; maps trace Values to ONNX names."""

    def __init__(self, opset):
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self.names = {}           # id(Value) -> ONNX name
        self._count = 0

    def fresh(self, hint="t"):
        self._count += 1
        return f"{hint}_{self._count}"

    def name_of(self, value):
        return self.names[id(value)]

    def bind(self, value, name):
        self.names[id(value)] = name

    def const(self, array, hint="const"):
        """An initializer holding ``array``; returns its name."""
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def operand(self, arg, dtype):
        """An input of a node: a traced Value, or a Python number as a constant of ``dtype``."""
        if isinstance(arg, Value):
            name = self.name_of(arg)
            if dtype is not None and arg.dtype is not dtype:
                return self.cast(name, dtype)
            return name
        return self.const(np.array(arg, dtype=_numpy(dtype)))

    def cast(self, name, dtype):
        return self.op("Cast", name, to=ONNX_DTYPES[dtype.name])

    def op(self, op_type, *inputs, outputs=1, **attrs):
        """Append a node; returns its output name (or list of names when outputs > 1)."""
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, [i if i is not None else "" for i in inputs], names, **attrs))
        return names[0] if outputs == 1 else names

    def ints(self, values, hint="shape"):
        return self.const(np.array(list(values), dtype=np.int64), hint)


def _numpy(dtype):
    return dtype.np if dtype is not None else None


def value_info(name, value, dynamic=None):
    """ONNX type of a graph input/output; ``dynamic`` maps axis -> symbolic name."""
    dims = [dynamic.get(i, d) if dynamic else d for i, d in enumerate(value.shape)]
    return helper.make_tensor_value_info(name, ONNX_DTYPES[value.dtype.name], dims)

