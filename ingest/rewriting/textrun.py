"""The fixed pipeline for one searched text: dense pool -> cross-encoder rerank -> MMR -> its documents.

For a search (a vector, the text the reranker reads, a pool size ``P``) over a :class:`ChunkIndex`:

1. **dense**: the top ``P`` chunks by inner product of L2-normalized vectors (= cosine), ties by index
   position (:func:`ingest.retrieval.topk.topk_inner_product`); a search with an ``ann_seed`` (the
   control S1-ann4) takes its ``P`` candidates from that seed's HNSW graph instead, scored exactly
   (:mod:`ingest.rewriting.ann`);
2. **rerank**: each pool chunk's *stage score* is the cross-encoder's ``CrossEncoder.predict`` output for
   (rerank text, chunk text) (sigmoid, in [0, 1], for one-logit models such as bge-reranker-base) when
   the stack has a reranker, else its cosine; the pool is ordered by stage score descending, ties by
   dense rank;
3. **mmr** (:mod:`ingest.rewriting.mmr`, lambda from the settings): over *documents* by default — the
   reranked pool collapsed to each document's best chunk (its first, i.e. highest-scored, chunk in
   rerank order), relevance = min-max normalized stage score, similarity = cosine of the best chunks'
   stored vectors; or over *chunks* (``mmr_unit: chunks``), where a document enters at its first picked
   chunk and carries its best chunk's score. The text keeps its first ``K`` documents (the strategy's
   ``depth_k``); each is recorded with its best chunk and stage score (a document's score is its best
   chunk's).

Everything is computed once per distinct search and shared by every strategy, seed and query that
searches the same vector with the same rerank text and pool; cross-encoder pairs are scored once each.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

import numpy as np

from ingest.retrieval.progress import progress_bar
from ingest.retrieval.topk import topk_inner_product
from ingest.rewriting import ann as ann_index
from ingest.rewriting.index import ChunkIndex
from ingest.rewriting.mmr import mmr_batch

Scorer = Callable[[list[tuple[str, str]]], np.ndarray]


@dataclasses.dataclass(frozen=True)
class Search:
    key: tuple  # identifies the vector (its embedding key(s)); equal (key, rerank_text, pool, ann_seed) are one search
    rerank_text: str
    pool: int
    ann_seed: int | None = None  # None: exact search; else the seed of the HNSW graph searched (S1-ann4)


@dataclasses.dataclass
class TextRun:
    """One search's three ranked lists as chunk positions into the index (1-based rank = position + 1)."""

    dense_pos: np.ndarray
    dense_score: np.ndarray
    rerank_pos: np.ndarray
    rerank_score: np.ndarray
    mmr_pos: np.ndarray  # best chunk of each kept document, in MMR order (at most k_max)
    mmr_score: np.ndarray


class CrossEncoderScorer:
    """Scores (query, passage) pairs with a sentence-transformers ``CrossEncoder``, loaded on first use."""

    def __init__(self, load: Callable[[], object], batch_size: int = 32, show_progress: bool = True):
        self._load, self._model = load, None
        self.batch_size, self.show_progress = batch_size, show_progress
        self.pairs_scored = 0

    def __call__(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        if self._model is None:
            self._model = self._load()
        order = sorted(range(len(pairs)), key=lambda i: (-len(pairs[i][0]) - len(pairs[i][1]), i))
        out = np.empty(len(pairs), dtype=np.float64)
        with progress_bar("reranking", total=len(pairs), enabled=self.show_progress) as advance:
            for start in range(0, len(order), 1024):
                part = order[start:start + 1024]
                out[part] = np.asarray(self._model.predict([pairs[i] for i in part], batch_size=self.batch_size,
                                                           show_progress_bar=False), dtype=np.float64).reshape(-1)
                advance(len(part))
        self.pairs_scored += len(pairs)
        return out


def run_searches(index: ChunkIndex, searches: Sequence[Search], vectors: np.ndarray, *, scorer: Scorer | None,
                 k_max: int, lam: float, unit: str = "documents",
                 ann: ann_index.AnnParams | None = None) -> tuple[list[TextRun], dict[str, float]]:
    """The lists of every search (``vectors[i]`` is search ``i``'s vector) and the seconds per step
    (``ann``: the HNSW settings, needed when a search has an ``ann_seed``; each seed's graph is built once)."""
    seconds = {"dense": 0.0, "rerank": 0.0, "mmr": 0.0}
    t0 = time.perf_counter()
    dense: list[tuple[np.ndarray, np.ndarray]] = [None] * len(searches)  # type: ignore[list-item]
    graphs: dict[int, object] = {}
    for pool, seed in sorted({(s.pool, s.ann_seed) for s in searches}, key=lambda ps: (ps[0], ps[1] is not None, ps[1] or 0)):
        rows = [i for i, s in enumerate(searches) if (s.pool, s.ann_seed) == (pool, seed)]
        if seed is None:
            pos, scores = topk_inner_product(vectors[rows], index.vectors, pool)
        else:
            if ann is None:
                raise ValueError("a search names an HNSW seed but run_searches got no AnnParams")
            if seed not in graphs:
                graphs[seed] = ann_index.build_index(index.vectors, seed, ann)
            graph = graphs[seed]
            pos, scores = ann_index.search(graph, index.vectors, vectors[rows], pool, ann.ef_search)
        for i, p, sc in zip(rows, pos, scores):
            dense[i] = (p, sc.astype(np.float64))
    seconds["dense"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    if scorer is not None:
        pair_index: dict[tuple[str, int], int] = {}
        for s, (pos, _) in zip(searches, dense):
            for p in pos.tolist():
                pair_index.setdefault((s.rerank_text, p), len(pair_index))
        scored = scorer([(text, index.texts[p]) for text, p in pair_index])
        stage = [np.array([scored[pair_index[(s.rerank_text, p)]] for p in pos.tolist()])
                 for s, (pos, _) in zip(searches, dense)]
    else:
        stage = [sc for _, sc in dense]
    seconds["rerank"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    ordered = []  # per search: rerank positions, stage scores, codes, each document's best chunk (rerank order)
    for (pos, _), st in zip(dense, stage):
        order = np.lexsort((np.arange(len(pos)), -st))  # stage score desc, then dense rank
        r_pos, r_score = pos[order], st[order]
        codes = index.doc_codes[r_pos]
        first = np.sort(np.unique(codes, return_index=True)[1])
        ordered.append((r_pos, r_score, codes, first))
    if unit == "documents":
        candidates = [first for _, _, _, first in ordered]
        picks_of = _batched_mmr(index, ordered, candidates, k_max, lam)
    else:
        candidates = [np.arange(len(r_pos)) for r_pos, _, _, _ in ordered]
        chunk_picks = _batched_mmr(index, ordered, candidates, max((len(c) for c in candidates), default=0), lam)
        picks_of = []
        for (_, _, codes, first), order in zip(ordered, chunk_picks):
            best_of = {int(codes[f]): int(f) for f in first}
            picks, seen = [], set()
            for c in order.tolist():
                code = int(codes[c])
                if code not in seen:
                    seen.add(code)
                    picks.append(best_of[code])
                if len(picks) == k_max:
                    break
            picks_of.append(np.asarray(picks, dtype=np.int64))
    runs = [TextRun(pos, cos, r_pos, r_score, r_pos[picks], r_score[picks])
            for (pos, cos), (r_pos, r_score, _, _), picks in zip(dense, ordered, picks_of)]
    seconds["mmr"] = time.perf_counter() - t0
    return runs, seconds


def _batched_mmr(index: ChunkIndex, ordered, candidates: list[np.ndarray], k: int, lam: float,
                 batch: int = 256) -> list[np.ndarray]:
    """Per search, its MMR picks as indices into its rerank order (``candidates`` are such indices), the
    pools of ``batch`` searches padded and run together (:func:`ingest.rewriting.mmr.mmr_batch`)."""
    out: list[np.ndarray | None] = [None] * len(candidates)
    dim = index.vectors.shape[1]
    by_width = sorted(range(len(candidates)), key=lambda i: len(candidates[i]))  # little padding per batch
    for lo in range(0, len(by_width), batch):
        part = by_width[lo:lo + batch]
        width = max(len(candidates[i]) for i in part)
        scores = np.full((len(part), width), np.nan)
        vectors = np.zeros((len(part), width, dim), dtype=np.float32)
        for row, i in enumerate(part):
            r_pos, r_score, _, _ = ordered[i]
            c = candidates[i]
            scores[row, :len(c)] = r_score[c]
            vectors[row, :len(c)] = index.vectors[r_pos[c]]
        picks = mmr_batch(scores, vectors, k, lam)
        for row, i in enumerate(part):
            p = picks[row]
            out[i] = candidates[i][p[p >= 0]]
    return out  # type: ignore[return-value]
