import numpy as np
import pytest

from udfs.ensembles import members_of
from udfs.fusion.subsets import subset_reduce


def test_every_subset_equals_a_left_to_right_reduction_bit_for_bit():
    rng = np.random.default_rng(0)
    x = rng.random((500, 5))
    x[rng.random(x.shape) < 0.3] = np.nan
    masks = np.arange(1, 32)
    members = members_of(masks, 5)
    sums = subset_reduce(np.nan_to_num(x), members, "sum")
    maxes = subset_reduce(x, members, "fmax")
    for j, row in enumerate(members):
        cols = np.flatnonzero(row)
        want_sum = np.nan_to_num(x[:, cols[0]])
        want_max = x[:, cols[0]]
        for c in cols[1:]:
            want_sum = want_sum + np.nan_to_num(x[:, c])
            want_max = np.fmax(want_max, x[:, c])
        assert np.array_equal(sums[j], want_sum)
        assert np.array_equal(maxes[j], want_max, equal_nan=True)


def test_subsets_whose_smaller_subset_is_absent_are_reduced_directly():
    x = np.array([[1.0, 2.0, 4.0], [0.5, np.nan, 3.0]])
    members = members_of(np.array([0b111, 0b101]), 3)  # neither 0b011 nor 0b001 is in the list
    np.testing.assert_array_equal(subset_reduce(np.nan_to_num(x), members, "sum"), [[7.0, 3.5], [5.0, 3.5]])
    with pytest.raises(ValueError, match="no member"):
        subset_reduce(x, np.zeros((1, 3), dtype=bool), "sum")
