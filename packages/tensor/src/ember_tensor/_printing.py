"""Tensor printing that matches ``repr(torch.Tensor)`` byte for byte.

Everything here is a pure function of a NumPy array plus a few tensor
attributes, so ``Tensor.__repr__`` only has to gather those and call
:func:`format_tensor`. The algorithm follows ``torch/_tensor_str.py``: one
formatter is fitted to (a summary of) the whole tensor so every element shares
one width and one notation, then rows are wrapped to the line width and the
``device=`` / ``dtype=`` / ``grad_fn=`` suffixes are appended.
"""

import contextlib
import dataclasses
import math

import numpy as np

__all__ = ["format_tensor", "get_printoptions", "printoptions", "set_printoptions"]

_FLOAT_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
                           "float8_e4m3fnuz", "float8_e5m2fnuz"})
_COMPLEX_DTYPES = frozenset({"complex32", "complex64", "complex128"})
_PREFIX = "tensor("


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


_OPTIONS = _PrintOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set options for printing tensors (same semantics as ``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point for floats (default 4).
        threshold: element count above which output is summarised with ``...``
            (default 1000).
        edgeitems: items kept at the start and end of each summarised dimension
            (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; applied first, then
            overridden by any explicit option.
        sci_mode: ``True``/``False`` forces scientific notation on/off; ``None``
            lets the formatter choose. Like PyTorch, every call resets it, so
            omitting it sets it back to ``None``.

    Example:
        >>> set_printoptions(precision=2)
        >>> get_printoptions()["precision"]
        2
        >>> set_printoptions(profile="default")
    """
    if profile is not None:
        # PyTorch silently ignores unknown profile names; so do we.
        for name, value in _PROFILES.get(profile, {}).items():
            setattr(_OPTIONS, name, value)
    if precision is not None:
        _OPTIONS.precision = precision
    if threshold is not None:
        _OPTIONS.threshold = threshold
    if edgeitems is not None:
        _OPTIONS.edgeitems = edgeitems
    if linewidth is not None:
        _OPTIONS.linewidth = linewidth
    _OPTIONS.sci_mode = sci_mode


def get_printoptions():
    """Return the current print options as a dict accepted by :func:`set_printoptions`.

    Example:
        >>> sorted(get_printoptions())
        ['edgeitems', 'linewidth', 'precision', 'sci_mode', 'threshold']
    """
    return dataclasses.asdict(_OPTIONS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change print options inside a ``with`` block.

    Example:
        >>> import numpy as np
        >>> with printoptions(precision=2):
        ...     print(format_tensor(np.array([1.2345], np.float32), "float32"))
        tensor([1.23])
    """
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


class _Formatter:
    """Chooses one notation and width for all elements of a tensor."""

    def __init__(self, sample, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = sample.reshape(-1)
        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(str(value)))
            return
        # Zeros, nan and inf carry no magnitude, so they must not pick the notation.
        finite = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if finite.size == 0:
            return
        magnitudes = np.abs(finite)
        smallest, largest = magnitudes.min(), magnitudes.max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if _OPTIONS.sci_mode is None:
            self.sci_mode = bool(largest / smallest > 1000.0 or largest > 1.0e8
                                 or smallest < 1.0e-4)
        else:
            self.sci_mode = _OPTIONS.sci_mode
        # Widths come from the finite non-zero values only; a wider "-0." or
        # "nan" is later printed unpadded rather than widening every column.
        for value in finite.tolist():
            if self.sci_mode:
                width = len(f"{value:.{_OPTIONS.precision}e}")
            elif self.int_mode:
                width = len(f"{value:.0f}") + 1  # + 1 for the trailing "."
            else:
                width = len(f"{value:.{_OPTIONS.precision}f}")
            self.max_width = max(self.max_width, width)

    def format(self, value):
        """Format one Python scalar, right-aligned to the common width."""
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{_OPTIONS.precision}e}"
        elif self.int_mode:
            # The trailing "." marks an integer-valued float as floating point.
            text = f"{value:.0f}"
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{_OPTIONS.precision}f}"
        return text.rjust(self.max_width)


class _ComplexFormatter:
    """PyTorch's complex notation: real and imaginary parts each get their own formatter
    (fitted to all the real parts, and to all the imaginary parts), printed as
    ``real+imagj`` with the imaginary part's padding dropped."""

    def __init__(self, sample):
        self.real = _Formatter(sample.real, True)
        self.imag = _Formatter(sample.imag, True)
        # An element's width: both parts and the "j" (the sign is part of the imag width).
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value):
        """Format one Python complex number."""
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        # A negative (or -0.) imaginary part brings its own sign.
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _summarized_sample(values, edgeitems):
    """The elements a summarised print shows, so only they shape the formatter."""
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        if values.shape[0] > 2 * edgeitems:
            return np.concatenate((values[:edgeitems], values[-edgeitems:]))
        return values
    if not edgeitems:
        return np.empty((0,) * values.ndim, values.dtype)
    rows = range(values.shape[0])
    if values.shape[0] > 2 * edgeitems:
        rows = [*range(edgeitems), *range(values.shape[0] - edgeitems, values.shape[0])]
    return np.stack([_summarized_sample(values[i], edgeitems) for i in rows])


def _format_row(values, indent, summarize, formatter):
    edgeitems = _OPTIONS.edgeitems
    # Each element takes its width plus ", ".
    per_line = max(1, (_OPTIONS.linewidth - indent) // (formatter.max_width + 2))
    if summarize and not edgeitems:
        items = ["..."]
    elif summarize and values.shape[0] > 2 * edgeitems:
        items = ([formatter.format(v) for v in values[:edgeitems].tolist()] + [" ..."]
                 + [formatter.format(v) for v in values[-edgeitems:].tolist()])
    else:
        items = [formatter.format(v) for v in values.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _format_nested(values, indent, summarize, formatter):
    if values.ndim == 0:
        return formatter.format(values.item())
    if values.ndim == 1:
        return _format_row(values, indent, summarize, formatter)
    edgeitems, length = _OPTIONS.edgeitems, values.shape[0]
    if summarize and length > 2 * edgeitems:
        rows = ([_format_nested(values[i], indent + 1, summarize, formatter)
                 for i in range(edgeitems)] + ["..."]
                + [_format_nested(values[i], indent + 1, summarize, formatter)
                   for i in range(length - edgeitems, length)])
    else:
        rows = [_format_nested(row, indent + 1, summarize, formatter) for row in values]
    # Blank lines between blocks grow with depth, as NumPy and PyTorch do.
    separator = "," + "\n" * (values.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(rows) + "]"


def _append_suffixes(text, suffixes, indent):
    # PyTorch measures the last line as if "tensor(" were absent and two columns
    # wider (its len - rfind + 1); kept as is because output must match exactly.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _OPTIONS.linewidth:
            text += ",\n" + " " * indent + suffix
            last_line_len = indent + len(suffix)
        else:
            text += ", " + suffix
            last_line_len += len(suffix) + 2
    return text + ")"


def _default_complex_name(default_dtype_name):
    # PyTorch leaves out the dtype of the default complex type too: complex128 when the
    # default is float64, else complex64.
    return "complex128" if default_dtype_name == "float64" else "complex64"


def format_tensor(values, dtype_name, *, default_dtype_name="float32", device=None,
                  requires_grad=False, grad_fn_name=None, layout_suffix=None):
    """Render a tensor exactly as PyTorch 2.x ``repr(tensor)`` does.

    Args:
        values: NumPy array holding the tensor's data, in its shape
            (float16/bfloat16/float8 passed as float32, complex32 as complex64,
            bool as ``np.bool_``).
        dtype_name: ember dtype name, e.g. ``"float32"`` or ``"int64"``.
        default_dtype_name: the current default float dtype; its tensors, and
            int64 and bool ones, print without a ``dtype=`` suffix.
        device: ``None`` (or ``"cpu"``) for CPU, else e.g. ``"cuda:0"``.
        requires_grad: leaf tensor requiring grad (ignored when
            ``grad_fn_name`` is given).
        grad_fn_name: name of the autograd node, e.g. ``"AddBackward0"``.
        layout_suffix: layout name for non-strided tensors, e.g.
            ``"torch.sparse_coo"``; printed as ``layout=torch.sparse_coo``.

    Returns:
        The ``tensor(...)`` string.

    Example:
        >>> import numpy as np
        >>> format_tensor(np.array([1.0, 2.5]), "float64", grad_fn_name="MulBackward0")
        'tensor([1.0000, 2.5000], dtype=torch.float64, grad_fn=<MulBackward0>)'
        >>> format_tensor(np.zeros((0, 3), np.int64), "int64")
        'tensor([], size=(0, 3), dtype=torch.int64)'
    """
    values = np.asarray(values)
    indent = len(_PREFIX)
    suffixes = []
    if device is not None and str(device) != "cpu":
        suffixes.append(f"device='{device}'")
    if values.size == 0:
        # Shape (0,) is implied by "[]"; any other empty shape must be spelled out.
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        # Nothing to infer the dtype from, so even int64/bool are named.
        if dtype_name != default_dtype_name:
            suffixes.append(f"dtype=torch.{dtype_name}")
        body = "[]"
    else:
        if not _OPTIONS.edgeitems:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype_name not in (default_dtype_name, _default_complex_name(default_dtype_name), "int64", "bool"):
            suffixes.append(f"dtype=torch.{dtype_name}")
        summarize = values.size > _OPTIONS.threshold
        sample = _summarized_sample(values, _OPTIONS.edgeitems) if summarize else values
        if dtype_name in _COMPLEX_DTYPES:
            formatter = _ComplexFormatter(sample)
        else:
            formatter = _Formatter(sample, dtype_name in _FLOAT_DTYPES)
        body = _format_nested(values, indent, summarize, formatter)
    if layout_suffix is not None:
        suffixes.append(f"layout={layout_suffix}")
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _append_suffixes(_PREFIX + body, suffixes, indent)
