"""torch.utils.backcompat: PyTorch 0.2's migration warnings, worded as its release notes
show them, at the program's calls only, and nothing while the switches are off."""
import warnings

import pytest

import ember_tensor as et
from ember_tensor import backcompat

BROADCAST = "self and other do not have the same shape, but are broadcastable, and have the same number of elements."
KEEPDIM = ('backwards compatibility: call to "sum" uses default value for keepdim which has changed default to '
           "False.  Consider passing as kwarg.")


@pytest.fixture
def switches():
    yield backcompat
    backcompat.broadcast_warning.enabled = False
    backcompat.keepdim_warning.enabled = False


def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught]


def test_broadcast_warning(switches):
    switches.broadcast_warning.enabled = True
    assert _warnings(lambda: et.add(et.ones(4, 1), et.ones(4))) == [BROADCAST]
    assert _warnings(lambda: et.ones(4, 1) * et.ones(4)) == [BROADCAST]
    assert _warnings(lambda: et.ones(4, 4) + et.ones(4)) == []  # not the same number of elements
    assert _warnings(lambda: et.ones(4) + et.ones(4)) == []
    switches.broadcast_warning.enabled = False
    assert _warnings(lambda: et.add(et.ones(4, 1), et.ones(4))) == []


def test_keepdim_warning(switches):
    switches.keepdim_warning.set_enabled(True)
    assert switches.keepdim_warning.get_enabled()
    assert _warnings(lambda: et.sum(et.ones(2, 3), 1)) == [KEEPDIM]
    assert _warnings(lambda: et.ones(2, 3).sum(dim=0)) == [KEEPDIM]
    assert _warnings(lambda: et.sum(et.ones(2, 3), 1, keepdim=False)) == []
    assert _warnings(lambda: et.sum(et.ones(2, 3), 1, False)) == []
    assert _warnings(lambda: et.ones(2, 3).sum()) == []  # no dim: nothing changed
    assert _warnings(lambda: et.ones(2, 3).var(1, keepdim=True)) == []


def test_only_the_programs_calls_warn(switches):
    switches.keepdim_warning.enabled = True
    # logsumexp reduces with sum/amax inside: one warning, for the call the program made
    assert len(_warnings(lambda: et.logsumexp(et.ones(2, 3), 1))) == 1
