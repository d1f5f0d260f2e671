"""ember-tensor's version (the one place it is written: pyproject.toml reads it from
here), and the version-window check every layer above runs at import.

As ``torch.version``: ``ember_tensor.version.__version__``; ``cuda`` is None (ember's
CUDA support comes from numba-cuda at run time, not from the build).

Each ember package is released on its own and declares the range of the layers below it
that it works with (``ember-autograd`` needs ``ember-tensor>=0.1,<0.2``). pip enforces the
range at install time; ``check_layer_version`` enforces it again at import time, because
an environment can drift (a ``pip install --no-deps``, a source checkout on ``PYTHONPATH``)
and a mismatch would otherwise surface as an obscure AttributeError deep inside a kernel.

The check is pure Python on purpose: importing ``packaging`` would cost more than the
check itself, and every ``import ember`` pays it.
"""

import re

__all__ = ["__version__", "cuda", "check_layer_version"]

__version__ = "0.1.0"
cuda = None

# The release segment of a PEP 440 version ("0.1.0" in "0.1.0.dev1", "0.1.0rc2",
# "0.1.0.post1" or "0.1.0+local"); an optional epoch ("1!") is not supported.
_RELEASE = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


def _release(version: str) -> tuple[int, ...] | None:
    """The release numbers of a version string, trailing zeros dropped; None if unparseable."""
    match = _RELEASE.match(version)
    if match is None:
        return None
    numbers = [int(part) for part in match.group(1).split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def check_layer_version(
    package: str, version: str, minimum: str, below: str, needed_by: str
) -> None:
    """Raise ImportError unless ``minimum <= version < below`` for a layer ember stands on.

    Versions are compared on their release numbers only, so development, pre- and
    post-releases and local builds of a release count as that release: ``0.1.0.dev1``
    satisfies ``>=0.1,<0.2``, and ``0.2.0rc1`` does not (PEP 440 also keeps
    pre-releases of the upper bound out of ``<0.2``).

    Args:
        package: distribution name of the layer below, e.g. ``"ember-tensor"``.
        version: the version of it that is installed, e.g. ``ember_tensor.__version__``.
        minimum: lowest version that works (inclusive), e.g. ``"0.1"``.
        below: first version that no longer works (exclusive), e.g. ``"0.2"``.
        needed_by: the package that asks, with its version, e.g. ``"ember-autograd 0.1.0"``.

    Raises:
        ImportError: the installed version is outside the range, or cannot be read.
        ValueError: ``minimum`` or ``below`` is not a version (a bug in the caller).

    Example:
        >>> check_layer_version("ember-tensor", "0.1.3", "0.1", "0.2", "ember-autograd 0.1.0")
        >>> check_layer_version("ember-tensor", "0.3.0", "0.1", "0.2", "ember-autograd 0.1.0")
        Traceback (most recent call last):
        ...
        ImportError: ember-autograd 0.1.0 needs ember-tensor>=0.1,<0.2 but ember-tensor 0.3.0 is installed; install a matching version: pip install 'ember-tensor>=0.1,<0.2'
    """
    low, high = _release(minimum), _release(below)
    if low is None or high is None:
        raise ValueError(
            f"check_layer_version() expected versions like '0.1' for minimum and below, "
            f"got minimum={minimum!r}, below={below!r}"
        )
    requirement = f"{package}>={minimum},<{below}"
    installed = _release(version)
    if installed is not None and low <= installed < high:
        return
    raise ImportError(
        f"{needed_by} needs {requirement} but {package} {version} is installed; "
        f"install a matching version: pip install '{requirement}'"
    )
