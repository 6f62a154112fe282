import numpy as np

from tests.udfs.fusion.runs import assert_equals_ranx, pair_masks, random_runs
from udfs.ensembles import members_of
from udfs.fusion.comb_mnz import comb_mnz
from udfs.fusion.min_max import min_max_norm

NAN = np.nan


def test_hand_case_counts_zero_scores():
    norm = np.array([[1.0, NAN], [0.0, 1.0], [NAN, 0.0], [0.0, 0.0]])
    got = comb_mnz(norm, members_of(np.array([0b11, 0b01]), 2))
    # d4 is listed by both with normalized 0: 2 · 0 = 0, not NaN
    np.testing.assert_array_equal(got, [[1, 1], [2, 0], [0, NAN], [0, 0]])


def test_equals_ranx_mnz_with_min_max():
    rr = random_runs(3)
    masks = pair_masks(4)
    norm = min_max_norm(rr.stack.scores, rr.stack.offsets)
    assert_equals_ranx(rr, comb_mnz(norm, members_of(np.array(masks), 4)), masks, "mnz", "min-max")
