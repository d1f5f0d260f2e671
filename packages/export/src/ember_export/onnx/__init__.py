"""``ember.onnx``: ONNX export (``export``) checked with onnx's checker, and import (``load``).

    >>> import ember as torch
    >>> torch.onnx.export(model, torch.randn(1, 1, 28, 28), "net.onnx", input_names=["x"],
    ...                   dynamic_axes={"x": {0: "batch"}})                      # doctest: +SKIP
    >>> net = torch.onnx.load("net.onnx")          # runs (and trains) in ember  # doctest: +SKIP
"""
from ._emitter import SymbolicError
from ._export import DEFAULT_OPSET, MIN_OPSET, build_model, export, is_in_onnx_export
from ._import import OnnxModule, load
from ._symbolic import SYMBOLICS

__all__ = ["export", "load", "OnnxModule", "SymbolicError", "build_model", "supported_ops", "is_in_onnx_export",
           "MIN_OPSET",
           "DEFAULT_OPSET"]


def supported_ops():
    """The names of the ember ops the exporter can write."""
    return sorted(SYMBOLICS)
