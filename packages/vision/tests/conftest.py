"""Every test starts from the same random state (ember's generator and Python's ``random``,
which RandomOrder/RandomChoice use), so random transforms cannot make a run flaky."""
import random

import pytest

import ember_tensor


@pytest.fixture(autouse=True)
def _seeded():
    ember_tensor.manual_seed(0)
    random.seed(0)
