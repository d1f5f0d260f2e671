"""ember-tensor's version (the one place it is written: pyproject.toml reads it from
here), and the version-window check every layer above runs at import.

As ``torch.version``: ``ember_tensor.version.__version__``; ``cuda`` is None (ember's
CUDA support comes from numba-cuda at run time, not from the build).

Each ember package is released on its own and declares the range of the layers below it
that it works with (``ember-autograd`` needs ``ember-tensor>=0.1,<0.2``). pip enforces the
range at install time; ``check_layer_version`` enforces it again at import time, because
an environment can drift (a ``pip install --no-deps``, a source checkout on ``PYTHONPATH``)
and a mismatch would otherwise surface as an obscure AttributeError deep inside a kernel.

The ranges are written once per package, in the ``layers.txt`` beside its ``__init__.py``
(pip's requirement syntax): its pyproject.toml reads its dependencies from that file, and
``check_layers`` reads the same file at import. The meta-package's exact pins live the same
way, in ``ember/layers.txt``.

The check is pure Python on purpose: importing ``packaging`` would cost more than the
check itself, and every ``import ember`` pays it.
"""

import importlib
import re
from pathlib import Path

__all__ = ["__version__", "cuda", "check_layer_version", "read_layers", "check_layers"]

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


# One ember layer in a requirements file: a window ("ember-tensor>=0.1,<0.2") or a pin
# ("ember-tensor==0.1.0"); other lines (comments, third-party requirements) are not layers.
_LAYER_LINE = re.compile(r"(ember-[a-z]+)\s*(?:>=\s*([0-9.]+)\s*,\s*<\s*([0-9.]+)|==\s*([0-9.]+))\s*")


def _next_patch(version: str) -> str:
    """The first release after `version` ("0.1.0" -> "0.1.1"): the top of a pin's window."""
    numbers = [int(part) for part in version.split(".")]
    return ".".join(str(n) for n in numbers[:-1] + [numbers[-1] + 1])


def read_layers(path) -> list[tuple[str, str, str]]:
    r"""The ember layers a requirements file names, as (distribution, minimum, below).

    A pin ``==X`` is the window [X, next patch): that release and its dev/post builds.

    Raises:
        ValueError: a line names an ember layer in another form (a bug in the file).

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        ...     _ = f.write("# below\nember-tensor>=0.1,<0.2\nnumpy>=1.24\nember-nn==0.1.0\n")
        >>> read_layers(f.name)
        [('ember-tensor', '0.1', '0.2'), ('ember-nn', '0.1.0', '0.1.1')]
        >>> os.unlink(f.name)
    """
    layers = []
    for line in Path(path).read_text().splitlines():
        requirement = line.split("#", 1)[0].strip()
        if not requirement.startswith("ember-"):
            continue
        match = _LAYER_LINE.fullmatch(requirement)
        if match is None:
            raise ValueError(f"{path}: expected 'ember-x>=A,<B' or 'ember-x==A', got {requirement!r}")
        name, minimum, below, pin = match.groups()
        layers.append((name, pin, _next_patch(pin)) if pin else (name, minimum, below))
    return layers


def check_layers(package_file: str, needed_by: str) -> None:
    """Check every ember layer named in the ``layers.txt`` beside `package_file` (a
    package's ``__init__.py``) against the version installed: the import-time half of the
    ranges pip enforces at install time (see `check_layer_version`)."""
    for name, minimum, below in read_layers(Path(package_file).with_name("layers.txt")):
        layer = importlib.import_module(name.replace("-", "_"))
        check_layer_version(name, layer.__version__, minimum, below, needed_by)
