import numpy as np
import pytest

from udfs.fusion.ranking import ranks_of, top_k

NAN = np.nan


def test_ranks_break_ties_by_item_order_and_skip_nan():
    # group 0: items 0..3 (fused 0.5, 0.9, 0.5, NaN); group 1: items 4..5
    fused = np.array([[0.5], [0.9], [0.5], [NAN], [0.1], [0.2]])
    offsets = np.array([0, 4, 6])
    got = ranks_of(fused, offsets, np.array([0, 2, 3, 4]))
    assert got[:, 0].tolist() == [2.0, 3.0, np.inf, 2.0]


def test_ranks_equal_a_full_sort_on_random_data():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 30, 50)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    fused = np.round(rng.random((offsets[-1], 3)), 1)  # many ties
    fused[rng.random(fused.shape) < 0.1] = NAN
    targets = np.sort(rng.choice(offsets[-1], 80, replace=False))
    got = ranks_of(fused, offsets, targets)
    for j in range(3):
        for t, r in zip(targets, got[:, j]):
            g = np.searchsorted(offsets, t, side="right") - 1
            items = [i for i in range(offsets[g], offsets[g + 1]) if not np.isnan(fused[i, j])]
            order = sorted(items, key=lambda i: (-fused[i, j], i))
            assert r == (order.index(t) + 1 if t in order else np.inf)


def test_top_k_per_group():
    fused = np.array([0.5, 0.9, 0.5, NAN, 0.1, 0.2])
    rows, ranks = top_k(fused, np.array([0, 4, 6]), 2)
    assert rows.tolist() == [1, 0, 5, 4] and ranks.tolist() == [1, 2, 1, 2]
    with pytest.raises(ValueError, match="k must be >= 1"):
        top_k(fused, np.array([0, 6]), 0)
