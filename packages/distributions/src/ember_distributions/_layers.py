"""The version-window check of the layers below, at import.

ember_tensor's own checker lives in its private ``_version`` module, which a package above
may not import (packages meet through public surfaces only), so the few lines are here,
with the same error wording as every other layer's check.
"""
import re

_RELEASE = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


def _release(version):
    """The release numbers of a version string, trailing zeros dropped; None if unparseable."""
    match = _RELEASE.match(version)
    if match is None:
        return None
    numbers = [int(part) for part in match.group(1).split(".")]
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


def check_layer_version(package, version, minimum, below, needed_by):
    """Raise ImportError unless ``minimum <= version < below`` (release numbers only).

    >>> check_layer_version("ember-tensor", "0.1.3", "0.1", "0.2", "ember-distributions 0.1.0")
    """
    installed = _release(version)
    requirement = f"{package}>={minimum},<{below}"
    if installed is not None and _release(minimum) <= installed < _release(below):
        return
    raise ImportError(f"{needed_by} needs {requirement} but {package} {version} is installed; "
                      f"install a matching version: pip install '{requirement}'")
