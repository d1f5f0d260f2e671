"""ember-fx as a package: it imports, its version is its pyproject's, and it refuses
layers below it whose version is outside the range its pyproject declares (the checks
shared by every layer live in the repository's tests/package_contract.py)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
import package_contract

TestPackage = package_contract.tests_for(__file__, "ember_fx", ["ember-tensor", "ember-autograd", "ember-nn"])
