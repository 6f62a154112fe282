import numpy as np

from tests.udfs.fusion.runs import assert_equals_ranx, pair_masks, random_runs
from udfs.ensembles import members_of
from udfs.fusion.comb_sum import comb_sum
from udfs.fusion.min_max import min_max_norm

NAN = np.nan


def test_hand_case():
    # A = {d1: 0.9, d2: 0.4} -> {1, 0}; B = {d2: 0.7, d3: 0.5} -> {1, 0}
    norm = min_max_norm(np.array([[0.9, NAN], [0.4, 0.7], [NAN, 0.5]]), np.array([0, 3]))
    np.testing.assert_array_equal(norm, [[1, NAN], [0, 1], [NAN, 0]])
    np.testing.assert_array_equal(comb_sum(norm, members_of(np.array([0b11]), 2))[:, 0], [1, 1, 0])


def test_equals_ranx_sum_with_min_max():
    rr = random_runs(2)
    masks = pair_masks(4)
    norm = min_max_norm(rr.stack.scores, rr.stack.offsets)
    assert_equals_ranx(rr, comb_sum(norm, members_of(np.array(masks), 4)), masks, "sum", "min-max")
