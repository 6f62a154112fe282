import numpy as np
from ranx import Run
from ranx.normalization import min_max_norm as ranx_min_max

from tests.udfs.fusion.runs import random_runs
from udfs.fusion.min_max import min_max_norm

NAN = np.nan


def test_single_document_and_equal_scores_map_to_zero_like_ranx():
    # group 0: run 0 lists one document; group 1: run 0 lists two equal scores, run 1 is absent
    scores = np.array([[0.7, 0.2], [NAN, 0.9], [0.5, NAN], [0.5, NAN]])
    got = min_max_norm(scores, np.array([0, 2, 4]))
    np.testing.assert_array_equal(got, [[0, 0], [NAN, 1], [0, NAN], [0, NAN]])
    theirs = ranx_min_max(Run({"q": {"a": 0.7}, "r": {"a": 0.5, "b": 0.5}})).to_dict()
    assert theirs == {"q": {"a": 0.0}, "r": {"a": 0.0, "b": 0.0}}


def test_equals_ranx_min_max_norm():
    rr = random_runs(4)
    ours = min_max_norm(rr.stack.scores, rr.stack.offsets)
    group = rr.stack.group_of_item
    for s, run in enumerate(rr.runs):
        theirs = ranx_min_max(Run(run)).to_dict()
        for i in np.flatnonzero(~np.isnan(ours[:, s])):
            assert abs(theirs[rr.queries[group[i]]][rr.stack.item_key[i]] - ours[i, s]) < 1e-12
