"""MMR: hand-computed picks, the max-over-all-picked penalty (not LlamaIndex's most-recent pick)."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.rewriting.mmr import minmax, mmr_order

E = np.eye(3)


def most_recent_only(scores, vectors, k, lam):
    """LlamaIndex's variant (the known bug): the penalty is the cosine to the most recent pick only."""
    rel = minmax(scores)
    picked, last = [], None
    for _ in range(min(k, len(rel))):
        best, best_j = -np.inf, None
        for j in range(len(rel)):
            if j in picked:
                continue
            value = lam * rel[j] - (1 - lam) * (0.0 if last is None else float(vectors[j] @ vectors[last]))
            if value > best:
                best, best_j = value, j
        picked.append(best_j)
        last = best_j
    return picked


def naive(scores, vectors, k, lam):
    """The definition, literally: max over all of S, S empty -> 0; first maximum wins."""
    rel = minmax(scores)
    picked = []
    for _ in range(min(k, len(rel))):
        values = [
            (lam * rel[j] - (1 - lam) * max((float(vectors[j] @ vectors[s]) for s in picked), default=0.0), -j)
            for j in range(len(rel))
            if j not in picked
        ]
        picked.append(-max(values)[1])
    return picked


def test_hand_case_differs_from_most_recent_pick():
    # pool order 0..3; scores -> rel (1, 0.9, 0.85, 0); 0 and 2 are the same vector, 1 and 3 orthogonal to all
    scores = np.array([1.0, 0.9, 0.85, 0.0])
    vectors = np.stack([E[0], E[1], E[0], E[2]])
    # step 1: 0 (0.5). step 2: 1 -> 0.45, 2 -> 0.425 - 0.5 = -0.075, 3 -> 0: pick 1.
    # step 3 (max over {0, 1}): 2 -> -0.075, 3 -> 0: pick 3; then 2.
    assert mmr_order(scores, vectors, 4, 0.5).tolist() == [0, 1, 3, 2]
    # most-recent rule at step 3 compares 2 with 1 only (cos 0): 2 -> 0.425 wins
    assert most_recent_only(scores, vectors, 4, 0.5) == [0, 1, 2, 3]


def test_docstring_worked_example():
    scores = np.array([0.9, 0.8, 0.1])
    vectors = np.stack([E[0], E[0], E[1]])
    assert minmax(scores).tolist() == pytest.approx([1.0, 0.875, 0.0])
    assert mmr_order(scores, vectors, 3, 0.5).tolist() == [0, 2, 1]


def test_lambda_one_is_relevance_order_and_ties_go_to_pool_order():
    scores = np.array([0.2, 0.9, 0.9, 0.5])
    vectors = np.stack([E[0], E[0], E[0], E[0]])
    assert mmr_order(scores, vectors, 4, 1.0).tolist() == [1, 2, 3, 0]
    assert mmr_order(np.array([0.3, 0.3]), np.stack([E[0], E[1]]), 2, 0.85).tolist() == [0, 1]  # all equal: rel 1


def test_prefix_stable_k_larger_than_pool_and_empty():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(12, 8))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    s = rng.random(12)
    full = mmr_order(s, v, 50, 0.85)
    assert len(full) == 12 and sorted(full.tolist()) == list(range(12))
    assert mmr_order(s, v, 5, 0.85).tolist() == full[:5].tolist()
    assert mmr_order(np.zeros(0), np.zeros((0, 8)), 10, 0.85).tolist() == []


@pytest.mark.parametrize("seed", range(20))
def test_equals_the_literal_definition(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 15))
    v = rng.normal(size=(n, 6))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    s = np.round(rng.random(n), 1)  # rounded: ties happen
    lam = float(rng.choice([0.0, 0.3, 0.85, 1.0]))
    assert mmr_order(s, v, 10, lam).tolist() == naive(s, v, 10, lam)
