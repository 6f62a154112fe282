"""Seeded approximate-nearest-neighbour indexes: the study's dense stage (hnswlib HNSW graphs).

The paper's vector store is an approximate HNSW index (a Chroma-style store: cosine space, M 16,
ef_construction 100, a small ef_search) built per run, so even S1, which makes no LLM call, varies
across seeds. With ``dense: hnsw`` (the default) every search of a run with seed ``s`` goes through the
graph of *index seed* ``s`` (three seeds, three graphs); ``dense: exact`` searches exactly (checks).
The budget control S1-ann4 searches ``graphs`` (4) graphs of one run, index seeds
:func:`graph_seeds` = ``s, 1000 s + 1, 1000 s + 2, 1000 s + 3`` (the first is S1's own graph), and
asks whether four *different* approximate searches, unioned, buy what rewriting buys. Each graph is built
once per (corpus, embedder, index seed) within a run and shared by every strategy that searches it.
A graph is built over the chunk vectors (inner-product space; the vectors are L2-normalized, so inner
product = cosine):
``hnswlib.Index(space="ip")`` with ``M`` links per node, ``ef_construction`` and ``random_seed`` = the
seed (it draws each node's level, so the graphs differ by seed), chunks inserted in index order on one
thread (multi-threaded insertion is not reproducible). A search asks the graph for ``P`` neighbours
with ``ef = max(ef_search, P)`` (hnswlib requires ``ef >= k``).

Only *which* chunks enter the pool comes from the graph: each candidate's score is then recomputed
exactly, ``score = q . v`` in float64 over the stored float32 vectors (the exact search of the other
strategies scores in float32: the two agree to float32 rounding, ~1e-7), and the pool is ordered by
score descending, ties by index position, the exact search's order (:func:`ingest.retrieval.topk.
topk_inner_product`). So a candidate found by two graphs has one score, and the union by max score
(:mod:`ingest.rewriting.merge`) unions documents, never rescales them.

Worked example: vectors ``[1, 0]``, ``[0.6, 0.8]``, ``[0, 1]`` and query ``[1, 0]`` with ``P = 2``: any
graph that finds the two nearest returns positions ``[0, 1]`` with scores ``[1.0, 0.6]``.
"""
from __future__ import annotations

import dataclasses

import numpy as np

RESCORE_BATCH = 512  # queries re-scored at a time


@dataclasses.dataclass(frozen=True)
class AnnParams:
    """HNSW settings: ``m`` (links per node), ``ef_construction`` (candidate list while building) and
    ``ef_search`` (candidate list while searching; raised to the pool size when smaller)."""

    m: int = 16
    ef_construction: int = 100
    ef_search: int = 20


def graph_seeds(run_seed: int, graphs: int) -> tuple[int, ...]:
    """The index seeds of a run's ``graphs`` HNSW graphs: ``run_seed`` first, then ``1000 * run_seed + i``
    (the convention of the study's other derived seeds), so graph 0 is the run's own graph.

    >>> graph_seeds(42, 4)
    (42, 42001, 42002, 42003)
    """
    return (run_seed,) + tuple(1000 * run_seed + i for i in range(1, graphs))


def build_index(vectors: np.ndarray, seed: int, params: AnnParams):
    """One HNSW graph over ``vectors`` (float32, (n, d), rows L2-normalized), built on one thread."""
    import hnswlib

    n, dim = vectors.shape
    index = hnswlib.Index(space="ip", dim=dim)
    index.init_index(max_elements=max(n, 1), ef_construction=params.ef_construction, M=params.m, random_seed=seed)
    index.set_num_threads(1)
    index.add_items(np.ascontiguousarray(vectors, dtype=np.float32), np.arange(n))
    return index


def search(index, vectors: np.ndarray, queries: np.ndarray, k: int, ef_search: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query row, the graph's ``min(k, n)`` candidates as positions, re-scored exactly and ordered by
    score descending then position (module doc); returns ``(positions int64 (q, k'), scores float64)``."""
    n = vectors.shape[0]
    k = min(k, n)
    if len(queries) == 0 or k == 0:
        return np.zeros((len(queries), k), np.int64), np.zeros((len(queries), k))
    index.set_ef(max(ef_search, k))
    index.set_num_threads(1)
    labels, _ = index.knn_query(np.ascontiguousarray(queries, dtype=np.float32), k=k)
    labels = labels.astype(np.int64)
    scores = np.empty(labels.shape, dtype=np.float64)
    for lo in range(0, len(labels), RESCORE_BATCH):  # bounded memory: RESCORE_BATCH x k x d doubles at a time
        part = slice(lo, lo + RESCORE_BATCH)
        scores[part] = np.einsum("qkd,qd->qk", vectors[labels[part]].astype(np.float64), queries[part].astype(np.float64))
    order = np.lexsort((labels, -scores), axis=1)
    return np.take_along_axis(labels, order, 1), np.take_along_axis(scores, order, 1)
