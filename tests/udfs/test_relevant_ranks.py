import numpy as np
import pytest

from udfs.metrics.doc_level import hit_at_k, mrr_at_k, ndcg_at_k, recall_at_k
from udfs.metrics.relevant_ranks import metrics_from_ranks


def test_hand_case():
    # ranking 0: R = 2, relevant at ranks 2 and 12; ranking 1: R = 1, nothing retrieved; ranking 2: R = 3, rank 1
    got = metrics_from_ranks(np.array([[2.0], [12.0], [1.0]]), np.array([0, 0, 2]), np.array([2, 1, 3]), 10)
    d = 1 / np.log2(3)
    np.testing.assert_allclose(got["HIT@10"][:, 0], [1, 0, 1])
    np.testing.assert_allclose(got["R@10"][:, 0], [0.5, 0, 1 / 3])
    np.testing.assert_allclose(got["nDCG@10"][:, 0], [d / (1 + d), 0, 1 / (1 + d + 0.5)])
    np.testing.assert_allclose(got["MRR@10"][:, 0], [0.5, 0, 1])


def test_equals_doc_level_kernels_on_random_rankings():
    rng = np.random.default_rng(5)
    run_rel, qrels_rel, ranks, rows, n_rel = [], [], [], [], []
    for q in range(300):
        n = int(rng.integers(0, 25))
        flags = rng.random(n) < 0.2
        r = int(flags.sum()) + int(rng.integers(0 if flags.sum() else 1, 3))
        run_rel.append(flags.astype(float).tolist())
        qrels_rel.append([1.0] * r)
        ranks += (np.flatnonzero(flags) + 1.0).tolist() + [np.inf] * int(rng.integers(0, r - flags.sum() + 1))
        rows += [q] * (len(ranks) - len(rows))
        n_rel.append(r)
    got = metrics_from_ranks(np.array(ranks)[:, None], np.array(rows), np.array(n_rel), 10)
    np.testing.assert_allclose(got["HIT@10"][:, 0], hit_at_k(run_rel, 10))
    np.testing.assert_allclose(got["R@10"][:, 0], recall_at_k(run_rel, qrels_rel, 10), atol=1e-12)
    np.testing.assert_allclose(got["nDCG@10"][:, 0], ndcg_at_k(run_rel, qrels_rel, 10), atol=1e-12)
    np.testing.assert_allclose(got["MRR@10"][:, 0], mrr_at_k(run_rel, 10), atol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="no relevant judgment"):
        metrics_from_ranks(np.zeros((0, 1)), np.zeros(0), np.array([0]))
    with pytest.raises(ValueError, match="2 relevant ranks but R = 1"):
        metrics_from_ranks(np.array([[1.0], [2.0]]), np.array([0, 0]), np.array([1]))
