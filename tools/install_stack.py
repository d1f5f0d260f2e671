"""Install one ember package and the layers below it, from this checkout, as wheels.

    python tools/install_stack.py nn                         # tensor[cuda], autograd, nn[test]
    python tools/install_stack.py ember --extra '' --quiet   # no extra; --quiet goes to pip

tox and nox run this in each package's environment, so that the environment holds that
package and the layers it stands on, nothing else. Two things it does that a plain
``pip install ./packages/tensor ./packages/autograd`` does not:

- It builds from a clean copy of each package. setuptools builds in the source tree and
  never empties ``build/lib``: a module deleted or renamed in ``src/`` would still ship in
  the wheel, and two environments built side by side (``tox -p``) would race on it.
- It keeps the order of the stack in one place (``STACK``).

The layers go on one pip command line, so pip takes every ``ember-*`` requirement from
these paths and never looks for it on PyPI.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Each package with the layers below it, bottom-up.
STACK = {
    "tensor": [],
    "autograd": ["tensor"],
    "nn": ["tensor", "autograd"],
    "optim": ["tensor", "autograd"],
    "data": ["tensor", "autograd"],
    "distributed": ["tensor", "autograd"],
    "export": ["tensor", "autograd"],
    "distributions": ["tensor", "autograd"],
    "amp": ["tensor", "autograd"],
    "fx": ["tensor", "autograd", "nn"],
    "compile": ["tensor", "autograd", "nn", "fx"],
    "vision": ["tensor", "autograd", "nn", "data"],
    "ember": ["tensor", "autograd", "nn", "optim", "data", "distributed", "export", "distributions", "amp", "fx", "vision", "compile"],
}

# The tensor layer always comes with numba-cuda, so CUDA code can run on the simulator.
LAYER_EXTRAS = {"tensor": ["cuda"]}

# Build output and caches that a package folder may hold beside its sources.
TOP_LEVEL_LEFTOVERS = {"build", "dist", ".pytest_cache", ".hypothesis"}


def build_leftovers(directory, names):
    """The ``ignore`` of copytree: build output and caches, never sources."""
    at_top = Path(directory).parent == REPO / "packages"
    leftovers = {name for name in names if name == "__pycache__" or name.endswith(".egg-info")}
    if at_top:
        leftovers |= TOP_LEVEL_LEFTOVERS.intersection(names)
    return leftovers


def requirements(package, extra, root):
    """pip requirements for ``package`` and the layers below it, copied under ``root``."""
    result = []
    for layer in [*STACK[package], package]:
        copy = root / layer
        shutil.copytree(REPO / "packages" / layer, copy, ignore=build_leftovers)
        extras = LAYER_EXTRAS.get(layer, []) + ([extra] if extra and layer == package else [])
        result.append(f"{copy}[{','.join(extras)}]" if extras else str(copy))
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], epilog="Other arguments go to pip install."
    )
    parser.add_argument("package", choices=sorted(STACK))
    parser.add_argument("--extra", default="test", help="extra of the package itself ('' for none)")
    args, pip_args = parser.parse_known_args(argv)  # the rest goes to pip install
    with tempfile.TemporaryDirectory(prefix="ember-stack-") as root:
        stack = requirements(args.package, args.extra, Path(root))
        command = [sys.executable, "-m", "pip", "install", *stack, *pip_args]
        print(" ".join(command), flush=True)
        return subprocess.call(command)


if __name__ == "__main__":
    sys.exit(main())
