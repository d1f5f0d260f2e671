"""nox sessions for the ember monorepo; the same per-package environments as tox.ini.

    nox                   every package's tests, the differential test against PyTorch, the layering check
    nox -s nn             one package: it and the layers below it, nothing else
    nox -s benchmarks     python -m benchmarks (PyTorch columns if nox's Python has torch)
    nox -s build          a wheel of every package into dist/
"""

import shutil
from pathlib import Path

import nox

REPO = Path(__file__).parent
PACKAGES = ["tensor", "autograd", "nn", "optim", "data", "distributed", "export", "distributions", "amp", "fx", "vision", "compile", "ember"]

nox.options.sessions = [*PACKAGES, "oracle", "layering", "cuda_ptx"]

# The CUDA compiler's libraries from pip (NVVM, NVRTC): enough to compile kernels to PTX
# without a GPU or driver (the tensor tests and the cuda_ptx session do).
CUDA_COMPILER = "cuda-toolkit[nvvm,nvrtc,cccl]==13.*"


def install_stack(session, package, extra="test"):
    """Install ``package`` (with ``extra``) and the layers below it into the session.

    tools/install_stack.py knows the order of the stack and builds from clean copies.
    """
    session.run("python", "tools/install_stack.py", package, "--extra", extra)


def make_package_session(package):
    def run_package_tests(session):
        if package == "tensor":
            session.install(CUDA_COMPILER)
        install_stack(session, package)
        session.run("pytest", f"packages/{package}/tests", "-q", *session.posargs)

    distribution = "ember" if package == "ember" else f"ember-{package}"
    run_package_tests.__doc__ = f"Tests of {distribution}, installed with only the layers below it."
    return nox.session(name=package)(run_package_tests)


for _package in PACKAGES:
    make_package_session(_package)


@nox.session
def cuda_ptx(session):
    """Every CUDA kernel the simulator runs in the CUDA tests also compiles to PTX for sm_90."""
    session.install(CUDA_COMPILER)
    install_stack(session, "ember")
    session.run("python", "tools/cuda_ptx_check.py", *session.posargs)


@nox.session
def layering(session):
    """The import-linter contracts of the stack, and proof that they can fail."""
    session.install("import-linter>=2.1", "pytest>=7", "tomli>=1.1; python_version < '3.11'")
    session.run("pytest", "tests", "-q", "--ignore=tests/oracle", *session.posargs)


@nox.session
def oracle(session):
    """ember against PyTorch 2.13 (CPU), op by op: PyTorch as a test-only oracle."""
    session.install("torch==2.13.0")
    install_stack(session, "ember")
    session.run("pytest", "tests/oracle", "-q", *session.posargs)


# System site-packages: the benchmarks compare with PyTorch when it is importable, and
# PyTorch is never one of ember's dependencies, so it comes from the Python running nox
# (the ember packages installed in the session's environment shadow any others).
@nox.session(venv_params=["--system-site-packages"])
def benchmarks(session):
    """python -m benchmarks, against the whole stack installed as wheels."""
    if not (REPO / "benchmarks" / "__main__.py").is_file():
        session.error("benchmarks/__main__.py does not exist yet: there is no benchmark suite to run.")
    install_stack(session, "ember", extra="")
    session.run("python", "-m", "benchmarks", *session.posargs)


@nox.session
def build(session):
    """A wheel of every package, into dist/."""
    session.install("build>=1")
    for package in PACKAGES:
        # setuptools never empties build/lib: a module removed from src/ would still ship.
        shutil.rmtree(REPO / "packages" / package / "build", ignore_errors=True)
        session.run("python", "-m", "build", "--wheel", "--outdir", "dist/", f"packages/{package}")
