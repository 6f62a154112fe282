"""The seeded HNSW graphs of S1-ann4 (ingest/rewriting/ann.py): the docstring's worked example, exact
re-scoring and ordering, agreement with exact search when the graph search is exhaustive, one seed =
one graph (reproducible), and different seeds giving different approximate pools."""
from __future__ import annotations

import numpy as np

from ingest.retrieval.topk import topk_inner_product
from ingest.rewriting.ann import AnnParams, build_index, search


def _unit(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_worked_example():
    vectors = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)
    graph = build_index(vectors, 1, AnnParams())
    pos, scores = search(graph, vectors, np.array([[1, 0]], dtype=np.float32), 2, 20)
    assert pos.tolist() == [[0, 1]]
    assert np.allclose(scores, [[1.0, 0.6]], atol=1e-7)


def test_scores_are_exact_and_ties_break_by_position():
    vectors = np.array([[0, 1], [1, 0], [0, 1], [1, 0]], dtype=np.float32)
    graph = build_index(vectors, 3, AnnParams())
    pos, scores = search(graph, vectors, np.array([[0.6, 0.8]], dtype=np.float32), 4, 20)
    assert pos.tolist() == [[0, 2, 1, 3]]  # 0.8, 0.8, 0.6, 0.6: equal scores in index order
    assert scores.dtype == np.float64 and np.allclose(scores, [[0.8, 0.8, 0.6, 0.6]], atol=1e-7)
    pos, _ = search(graph, vectors, np.array([[1, 0]], dtype=np.float32), 10, 20)
    assert pos.shape == (1, 4)  # k is capped at the index size


def test_exhaustive_graph_search_equals_exact_search():
    rng = np.random.default_rng(0)
    vectors, queries = _unit(rng, 300, 16), _unit(rng, 25, 16)
    graph = build_index(vectors, 7, AnnParams(ef_construction=300))
    pos, scores = search(graph, vectors, queries, 20, 300)  # ef = n: the graph search visits everything
    exact_pos, exact_scores = topk_inner_product(queries, vectors, 20)
    assert np.array_equal(pos, exact_pos)
    assert np.allclose(scores, exact_scores, atol=1e-6)


def test_one_seed_one_graph_and_seeds_differ():
    rng = np.random.default_rng(1)
    vectors, queries = _unit(rng, 2000, 32), _unit(rng, 200, 32)
    params = AnnParams(m=4, ef_construction=20, ef_search=20)
    pools = {seed: search(build_index(vectors, seed, params), vectors, queries, 20, 20)[0] for seed in (1, 2)}
    again = search(build_index(vectors, 1, params), vectors, queries, 20, 20)[0]
    assert np.array_equal(pools[1], again)  # rebuilt with the same seed: the same pools
    assert not np.array_equal(pools[1], pools[2])  # another seed: another graph, other approximate pools
    exact = topk_inner_product(queries, vectors, 20)[0]
    recall = np.mean([len(set(a) & set(e)) / 20 for a, e in zip(pools[1], exact)])
    union = np.mean([len((set(a) | set(b)) & set(e)) / 20 for a, b, e in zip(pools[1], pools[2], exact)])
    assert 0.3 < recall < 1.0 and union > recall  # approximate, and a second graph finds more of the exact top 20
