import numpy as np
import pytest
from ranx import Qrels, Run, evaluate

from udfs.metrics.binary import mrr, ndcg_binary
from udfs.metrics.doc_level import hit_at_k, mrr_at_k, ndcg_at_k, recall_at_k


def _random_runs(rng, n_queries=200, graded=False):
    qrels, run, run_rel, qrels_rel = {}, {}, [], []
    for q in range(n_queries):
        n_docs = int(rng.integers(1, 60))
        docs = [f"d{i}" for i in rng.permutation(80)[:n_docs]]
        judged = rng.permutation(80)[: int(rng.integers(1, 8))]
        rels = {f"d{i}": int(rng.integers(1, 4) if graded else 1) for i in judged}
        if graded:  # some judged-but-irrelevant documents
            for i in rng.permutation(80)[:3]:
                rels.setdefault(f"d{i}", 0)
        if max(rels.values()) < 1:
            rels[f"d{judged[0]}"] = 1
        qrels[f"q{q:04d}"] = rels
        run[f"q{q:04d}"] = {d: float(len(docs) - i) for i, d in enumerate(docs)}  # strictly decreasing scores
        run_rel.append([rels.get(d, 0) for d in docs])
        qrels_rel.append(list(rels.values()))
    return Qrels(qrels), Run(run), run_rel, qrels_rel


def _ranx(qrels, run, metric):
    # ranx returns queries in sorted id order (zero-padded ids = input order); it drops
    # zero-relevance judgments (rel_lvl=1) exactly as the kernels do
    return np.array(list(evaluate(qrels, run, metric, return_mean=False)))


def test_binary_metrics_match_ranx():
    rng = np.random.default_rng(0)
    qrels, run, run_rel, qrels_rel = _random_runs(rng)
    flags = [[r >= 1 for r in row] for row in run_rel]
    n_rel = [sum(r >= 1 for r in row) for row in qrels_rel]
    np.testing.assert_allclose(mrr(flags), _ranx(qrels, run, "mrr"), atol=1e-9)
    np.testing.assert_allclose(ndcg_binary(flags, n_rel, 10), _ranx(qrels, run, "ndcg@10"), atol=1e-9)


@pytest.mark.parametrize("graded", [False, True])
def test_document_level_metrics_match_ranx(graded):
    rng = np.random.default_rng(1 + graded)
    qrels, run, run_rel, qrels_rel = _random_runs(rng, graded=graded)
    np.testing.assert_allclose(hit_at_k(run_rel, 10), _ranx(qrels, run, "hits@10") > 0, atol=1e-9)
    np.testing.assert_allclose(recall_at_k(run_rel, qrels_rel, 10), _ranx(qrels, run, "recall@10"), atol=1e-9)
    np.testing.assert_allclose(ndcg_at_k(run_rel, qrels_rel, 10), _ranx(qrels, run, "ndcg@10"), atol=1e-9)
    np.testing.assert_allclose(mrr_at_k(run_rel, 10), _ranx(qrels, run, "mrr@10"), atol=1e-9)


def test_binary_hand_case():
    flags = [[False, True, False, True], [False] * 3, []]
    np.testing.assert_allclose(mrr(flags), [0.5, 0.0, 0.0])
    expect = (1 / np.log2(3) + 1 / np.log2(5)) / (1 + 1 / np.log2(3) + 1 / np.log2(4))
    np.testing.assert_allclose(ndcg_binary(flags, [3, 2, 0], 10), [expect, 0.0, 0.0])
    with pytest.raises(ValueError, match="more relevant items retrieved"):
        ndcg_binary([[True, True]], [1], 10)


def test_recall_without_relevant_judgment_raises():
    with pytest.raises(ValueError, match="no relevant judgment"):
        recall_at_k([[0, 1]], [[0]], 10)
