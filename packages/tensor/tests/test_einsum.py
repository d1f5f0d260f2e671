"""einsum against NumPy: batched products, traces, diagonals, ellipses, broadcasting
size-1 subscripts, implicit and explicit outputs, spaces; contiguous and transposed
operands, operands as a list; and hypothesis over random two-operand equations."""
import numpy as np
import pytest

import ember_tensor as E
from linalg_cases import assert_close, laid_out

RNG = np.random.default_rng(1)


EINSUM_CASES = [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("bii->b", [(2, 3, 3)]),
    ("iji->j", [(3, 2, 3)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("b...,b...->...", [(2, 3, 4), (2, 3, 4)]),
    ("bij,bkj->", [(2, 3, 4), (2, 5, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i", [(3,), (3,)]),
    ("bij->jib", [(2, 3, 4)]),
    ("bij,bjk,bkl->bil", [(2, 3, 4), (2, 4, 5), (2, 5, 2)]),
    ("ijk,jkl->il", [(2, 3, 4), (3, 4, 5)]),
    ("ij,kj->ik", [(3, 1), (2, 4)]),  # size-1 subscript broadcasts
    ("i,->i", [(3,), ()]),
    ("ab, bc -> ca", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
@pytest.mark.parametrize("transposed", [False, True], ids=["contiguous", "transposed"])
def test_einsum_matches_numpy(equation, shapes, transposed):
    arrays = [RNG.standard_normal(s) for s in shapes]
    expected = np.einsum(equation.replace(" ", ""), *[np.broadcast_to(a, s) for a, s in zip(arrays, shapes)]) \
        if equation != "ij,kj->ik" else np.einsum("ij,kj->ik", np.broadcast_to(arrays[0], (3, 4)), arrays[1])
    assert_close(E.einsum(equation, *[laid_out(a, transposed) for a in arrays]), expected)
    assert_close(E.einsum(equation, [laid_out(a) for a in arrays]), expected)


def test_einsum_matches_numpy_hypothesis():
    """Random two-operand equations over a small label set, with an explicit output."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st
    labels = "abcd"
    sizes = {"a": 2, "b": 3, "c": 1, "d": 2}
    term = st.lists(st.sampled_from(labels), min_size=0, max_size=3)

    @hypothesis.settings(max_examples=40, deadline=None, derandomize=True)
    @hypothesis.given(term, term, st.data())
    def check(left, right, data):
        used = sorted(set(left) | set(right))
        output = data.draw(st.permutations(used)).copy()[:data.draw(st.integers(0, len(used)))]
        equation = f"{''.join(left)},{''.join(right)}->{''.join(output)}"
        a = RNG.standard_normal([sizes[c] for c in left])
        b = RNG.standard_normal([sizes[c] for c in right])
        assert_close(E.einsum(equation, E.tensor(a), E.tensor(b)), np.einsum(equation, a, b))

    check()
