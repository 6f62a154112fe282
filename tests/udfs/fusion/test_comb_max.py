import numpy as np

from tests.udfs.fusion.runs import assert_equals_ranx, pair_masks, random_runs
from udfs.ensembles import members_of
from udfs.fusion.comb_max import comb_max

NAN = np.nan


def test_hand_case():
    # A = {d1: 0.9, d2: 0.4}, B = {d2: 0.7, d3: 0.5}; items d1, d2, d3
    scores = np.array([[0.9, NAN], [0.4, 0.7], [NAN, 0.5]])
    got = comb_max(scores, members_of(np.array([0b11, 0b01, 0b10]), 2))
    np.testing.assert_array_equal(got, [[0.9, 0.9, NAN], [0.7, 0.4, 0.7], [0.5, NAN, 0.5]])


def test_equals_ranx_max_without_normalization():
    rr = random_runs(0)
    masks = pair_masks(4)
    assert_equals_ranx(rr, comb_max(rr.stack.scores, members_of(np.array(masks), 4)), masks, "max", None)
