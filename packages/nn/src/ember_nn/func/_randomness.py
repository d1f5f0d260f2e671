"""vmap's ``randomness`` flag over a loop of per-sample calls.

PyTorch's batched random ops either raise (``'error'``), draw independently per sample
(``'different'``) or draw once for the whole batch (``'same'``). Run per sample, the loop
draws independently by itself; ``'same'`` replays the generator's state before every
sample; ``'error'`` notices that the default generator moved during a call and raises
PyTorch's error (after the call rather than at the op).
"""
import contextlib

import ember_tensor as E

__all__ = ["check_randomness", "randomness_guard", "RANDOMNESS_ERROR"]

RANDOMNESS_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                    "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def check_randomness(randomness):
    """PyTorch's error for a value other than 'error', 'different' or 'same'."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


@contextlib.contextmanager
def randomness_guard(randomness):
    """Around one per-sample call: raise if `randomness` is 'error' and the call drew numbers."""
    if randomness != "error":
        yield
        return
    before = E.get_rng_state()
    yield
    if not E.equal(before, E.get_rng_state()):
        raise RuntimeError(RANDOMNESS_ERROR)
