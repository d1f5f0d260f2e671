"""``torch.set_float32_matmul_precision``: how much precision float32 matmuls may trade
for speed ("highest", "high": TF32 allowed, "medium": bfloat16 allowed).

ember's matmuls run in full float32 on every device (NumPy's BLAS on the CPU, ember's
own kernels on CUDA), so the setting is kept and reported (with
``torch.backends.cuda.matmul.allow_tf32``, its older spelling) and changes no result.
"""
import warnings

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision", "allow_tf32", "set_allow_tf32"]

_PRECISIONS = ("highest", "high", "medium")
_state = {"precision": "highest"}


def set_float32_matmul_precision(precision):
    """Set the float32 matmul precision: "highest", "high" or "medium". Another value
    warns and changes nothing, as in PyTorch."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state["precision"] = precision


def get_float32_matmul_precision():
    """The float32 matmul precision: "highest" unless set."""
    return _state["precision"]


def allow_tf32():
    """``torch.backends.cuda.matmul.allow_tf32``: whether the precision is below "highest"."""
    return _state["precision"] != "highest"


def set_allow_tf32(value):
    """Setting ``allow_tf32`` is setting the precision to "high" (True) or "highest"."""
    _state["precision"] = "high" if value else "highest"
