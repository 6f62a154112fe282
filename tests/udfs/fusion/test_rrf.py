import numpy as np
import pytest

from tests.udfs.fusion.runs import assert_equals_ranx, pair_masks, random_runs
from udfs.ensembles import members_of
from udfs.fusion.rrf import rrf


def test_hand_case_k60():
    # A ranks d1, d2; B ranks d2, d3
    ranks = np.array([[1, 0], [2, 1], [0, 2]])
    got = rrf(ranks, members_of(np.array([0b11, 0b10]), 2))
    np.testing.assert_allclose(got[:, 0], [1 / 61, 1 / 62 + 1 / 61, 1 / 62], atol=1e-15)
    assert np.isnan(got[0, 1]) and got[1, 1] == pytest.approx(1 / 61)


def test_other_k_and_bad_k():
    got = rrf(np.array([[1, 3]]), members_of(np.array([0b11]), 2), k=0)
    assert got[0, 0] == pytest.approx(1 + 1 / 3)
    with pytest.raises(ValueError, match="k must be >= 0"):
        rrf(np.array([[1]]), np.array([[True]]), k=-1)


def test_equals_ranx_rrf():
    rr = random_runs(1)
    masks = pair_masks(4)
    # ranx fuse min-max normalizes first (its default), which keeps each run's order
    assert_equals_ranx(rr, rrf(rr.stack.ranks, members_of(np.array(masks), 4)), masks, "rrf", "min-max")
