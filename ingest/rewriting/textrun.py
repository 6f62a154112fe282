"""The fixed pipeline for one searched text: dense pool -> cross-encoder rerank -> MMR -> its documents.

For a search (a vector, the text the reranker reads, a pool size ``P``, the ``K`` documents its list
must hold) over a :class:`ChunkIndex`:

1. **dense**: the top ``P`` chunks by inner product of L2-normalized vectors (= cosine), ties by index
   position (:func:`ingest.retrieval.topk.topk_inner_product`) under ``dense: exact``; a search with an
   ``ann_seed`` (every search under ``dense: hnsw``, and the control S1-ann4) takes its ``P`` candidates
   from that index seed's HNSW graph instead, scored exactly (:mod:`ingest.rewriting.ann`; each graph is
   built once). **Filling** (``fill``): ``fixed`` (the paper's, default) keeps the ``P`` chunks, so a
   text's list holds fewer than ``K`` documents when a long document fills several pooled chunks;
   ``widen``: when the pool's chunks come from fewer than ``min(K, documents in the corpus)`` distinct
   documents, the pool doubles (``2P``, ``4P``, ... at most every chunk) until it holds them, so every
   text's list has its ``K`` documents whenever the corpus has them; the searched size is the recorded
   ``pool``. An HNSW pool also
   records, per chunk, whether exact search's top ``P`` (same ``P``, ties by position) holds it, so its
   recall against exact search is ``in_exact`` averaged over the pool (mart ``rewrite_ann_recall``); this
   check is one exact search per distinct (text, pool), queries x chunks (at 1.2M chunks minutes on a
   CPU; run, at the configured pools, while graphs are still being built and a core is free: the last
   graphs of a run build alone on 2 cores), so ``recall_check=False`` (``rewriting.ann.recall_check:
   false``) skips it: ``in_exact`` is then NULL and the mart counts no pool;
2. **rerank**: each pool chunk's *stage score* is the cross-encoder's ``CrossEncoder.predict`` output for
   (rerank text, chunk text) (sigmoid, in [0, 1], for one-logit models such as bge-reranker-base) when
   the stack has a reranker, else its cosine; the pool is ordered by stage score descending, ties by
   dense rank;
3. **mmr** (:mod:`ingest.rewriting.mmr`, lambda from the settings): over *documents* by default — the
   reranked pool collapsed to each document's best chunk (its first, i.e. highest-scored, chunk in
   rerank order), relevance = min-max normalized stage score, similarity = cosine of the best chunks'
   stored vectors; or over *chunks* (``mmr_unit: chunks``), where a document enters at its first picked
   chunk and carries its best chunk's score. The text keeps its first ``K`` documents in MMR pick order
   (``K``: the strategy's ``depth_k``, or ``max_merged`` for a list that is its strategy's only text);
   each is recorded with its best chunk and stage score (a document's score is its best chunk's).

Rerank and MMR are computed once per distinct (vector, rerank text, widened pool, graph) and shared by
every strategy, seed and query that searches it (MMR picks are prefix-stable, so a shorter ``K`` takes
the first ``K`` picks of a longer one); cross-encoder pairs are scored once each.
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
    key: tuple  # identifies the vector (its embedding key(s)); equal (key, rerank_text, pool, ann_seed, k) are one search
    rerank_text: str
    pool: int  # the configured pool; widened until it holds k documents (module doc)
    ann_seed: int | None = None  # None: exact search; else the index seed of the HNSW graph searched
    k: int = 10  # documents the text's list must hold (fewer only when the corpus has fewer)


@dataclasses.dataclass
class TextRun:
    """One search's three ranked lists as chunk positions into the index (1-based rank = position + 1)."""

    dense_pos: np.ndarray
    dense_score: np.ndarray
    rerank_pos: np.ndarray
    rerank_score: np.ndarray
    mmr_pos: np.ndarray  # best chunk of each kept document, in MMR order (the search's k)
    mmr_score: np.ndarray
    pool: int = 0  # the pool searched (the configured one, widened when it held fewer than k documents)
    dense_exact: np.ndarray | None = None  # per dense chunk: in exact search's top ``pool`` (int8 -1: not checked)


class CrossEncoderScorer:
    """Scores (query, passage) pairs with a sentence-transformers ``CrossEncoder``, loaded on first use."""

    def __init__(
        self, load: Callable[[], object], batch_size: int = 32, show_progress: bool = True, *, spec=None, engine=None
    ):
        self._load, self._model = load, None
        self.batch_size, self.show_progress = batch_size, show_progress
        self.spec, self.engine = spec, engine  # engine (RaySettings): the pairs are scored by a Ray Data job
        self.pairs_scored = 0

    def __call__(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        order = sorted(range(len(pairs)), key=lambda i: (-len(pairs[i][0]) - len(pairs[i][1]), i))
        out = np.empty(len(pairs), dtype=np.float64)
        with progress_bar("reranking", total=len(pairs), enabled=self.show_progress) as advance:
            if self.engine is not None:  # the same blocks of 1,024 pairs and model batches, on the workers
                from ingest.retrieval.ray_engine import score_pairs

                out[order] = score_pairs(
                    self.spec, [pairs[i] for i in order], self.engine, self.batch_size, block=1024, advance=advance
                )
                self.pairs_scored += len(pairs)
                return out
            if self._model is None:
                self._model = self._load()
            for start in range(0, len(order), 1024):
                part = order[start : start + 1024]
                out[part] = np.asarray(
                    self._model.predict([pairs[i] for i in part], batch_size=self.batch_size, show_progress_bar=False),
                    dtype=np.float64,
                ).reshape(-1)
                advance(len(part))
        self.pairs_scored += len(pairs)
        return out


def run_searches(
    index: ChunkIndex,
    searches: Sequence[Search],
    vectors: np.ndarray,
    *,
    scorer: Scorer | None,
    lam: float,
    unit: str = "documents",
    ann: ann_index.AnnParams | None = None,
    recall_check: bool = True,
    fill: str = "fixed",
) -> tuple[list[TextRun], dict[str, float]]:
    """The lists of every search (``vectors[i]`` is search ``i``'s vector) and the seconds per step
    (``ann``: the HNSW settings, needed when a search has an ``ann_seed``; each seed's graph is built once;
    ``fill``: ``fixed`` or ``widen``, the module doc's step 1)."""
    seconds = {"dense": 0.0, "rerank": 0.0, "mmr": 0.0}
    t0 = time.perf_counter()
    dense, pools, exact_flags, graph_seconds = _dense(index, searches, vectors, ann, recall_check, fill)
    seconds["dense"] = time.perf_counter() - t0  # graphs included: built (ann_build) or loaded (ann_load)
    seconds.update(graph_seconds)

    # one rerank + MMR per distinct (vector, rerank text, widened pool, graph); k = the most any use needs
    unique: dict[tuple, int] = {}
    use = [unique.setdefault((s.key, s.rerank_text, pool, s.ann_seed), len(unique)) for s, pool in zip(searches, pools)]
    first_of = {u: i for i, u in reversed(list(enumerate(use)))}
    reps = [first_of[u] for u in range(len(unique))]
    k_of = np.zeros(len(unique), dtype=np.int64)
    for i, u in enumerate(use):
        k_of[u] = max(k_of[u], searches[i].k)

    t0 = time.perf_counter()
    if scorer is not None:
        if index.texts is None:
            raise ValueError(
                "the index was loaded without its chunk texts (load_index keep_texts=False): a cross-encoder needs them"
            )
        pair_index: dict[tuple[str, int], int] = {}
        for i in reps:
            for p in dense[i][0].tolist():
                pair_index.setdefault((searches[i].rerank_text, p), len(pair_index))
        scored = scorer([(text, index.texts[p]) for text, p in pair_index])
        stage = [
            np.array([scored[pair_index[(searches[i].rerank_text, p)]] for p in dense[i][0].tolist()]) for i in reps
        ]
    else:
        stage = [dense[i][1] for i in reps]
    seconds["rerank"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    ordered = []  # per unique search: rerank positions, stage scores, codes, each document's best chunk (rerank order)
    for i, st in zip(reps, stage):
        pos = dense[i][0]
        order = np.lexsort((np.arange(len(pos)), -st))  # stage score desc, then dense rank
        r_pos, r_score = pos[order], st[order]
        codes = index.doc_codes[r_pos]
        first = np.sort(np.unique(codes, return_index=True)[1])
        ordered.append((r_pos, r_score, codes, first))
    if unit == "documents":
        candidates = [first for _, _, _, first in ordered]
        picks_of = _batched_mmr(index, ordered, candidates, k_of, lam)
    else:
        candidates = [np.arange(len(r_pos)) for r_pos, _, _, _ in ordered]
        chunk_picks = _batched_mmr(index, ordered, candidates, np.array([len(c) for c in candidates]), lam)
        picks_of = []
        for (_, _, codes, first), order, k in zip(ordered, chunk_picks, k_of):
            best_of = {int(codes[f]): int(f) for f in first}
            picks, seen = [], set()
            for c in order.tolist():
                code = int(codes[c])
                if code not in seen:
                    seen.add(code)
                    picks.append(best_of[code])
                if len(picks) == k:
                    break
            picks_of.append(np.asarray(picks, dtype=np.int64))
    runs = []
    for i, s in enumerate(searches):
        u = use[i]
        r_pos, r_score, _, _ = ordered[u]
        picks = picks_of[u][: s.k]
        pos, cos = dense[reps[u]]
        runs.append(TextRun(pos, cos, r_pos, r_score, r_pos[picks], r_score[picks], pools[i], exact_flags[reps[u]]))
    seconds["mmr"] = time.perf_counter() - t0
    return runs, seconds


def _distinct_per_row(codes: np.ndarray) -> np.ndarray:
    """Distinct values per row of an int matrix."""
    if codes.shape[1] == 0:
        return np.zeros(len(codes), dtype=np.int64)
    srt = np.sort(codes, axis=1)
    return 1 + (np.diff(srt, axis=1) != 0).sum(axis=1)


def _dense(
    index: ChunkIndex,
    searches: Sequence[Search],
    vectors: np.ndarray,
    ann: ann_index.AnnParams | None,
    recall_check: bool = True,
    fill: str = "fixed",
):
    """Per search its dense pool ``(positions, cosines)``, widened pool size and (HNSW) exact-membership
    flags (module doc, step 1; not checked: int8 -1 per chunk)."""
    n_chunks, n_docs = len(index.chunk_ids), len(index.documents)
    dense: list[tuple[np.ndarray, np.ndarray]] = [None] * len(searches)  # type: ignore[list-item]
    pools = [max(1, s.pool) for s in searches]  # a pool larger than the corpus returns every chunk
    timing = {"ann_build": 0.0, "ann_load": 0.0}
    seeds = sorted({s.ann_seed for s in searches}, key=lambda seed: (seed is not None, seed or 0))
    if ann is None and any(seed is not None for seed in seeds):
        raise ValueError("a search names an HNSW seed but run_searches got no AnnParams")
    digest = index.digest() if index.graph_folder is not None and seeds != [None] else None
    # the recall check: one exact search per distinct (vector, pool) among the HNSW searches (the same query
    # under three index seeds is one exact search), at the configured pools first, while graphs are built
    checks = _ExactChecks(index.vectors, vectors, timing)
    if recall_check:
        checks.plan(_check_rows(searches, pools))
    if index.engine is not None and ann is not None:  # engine ray: every missing graph a Ray task, saved for below
        from ingest.rewriting.ann_ray import build_on_ray

        build_on_ray(seeds, index.vectors, ann, index.graph_folder, digest, index.engine, timing)
    # one graph at a time (each holds a copy of the vectors), the next ones built meanwhile on other cores
    for seed, graph in ann_index.graphs_in_turn(
        seeds, index.vectors, ann, index.graph_folder, digest, timing, workers=index.graph_workers, idle=checks.step
    ):
        todo = [i for i, s in enumerate(searches) if s.ann_seed == seed]
        while todo:
            retry = []
            for pool in sorted({pools[i] for i in todo}):
                rows = [i for i in todo if pools[i] == pool]
                if graph is None:
                    pos, scores = topk_inner_product(vectors[rows], index.vectors, pool)
                else:
                    pos, scores = ann_index.search(graph, index.vectors, vectors[rows], pool, ann.ef_search)
                held = _distinct_per_row(index.doc_codes[pos])
                for i, p, sc, h in zip(rows, pos, scores, held.tolist()):
                    dense[i] = (p, sc.astype(np.float64))
                    if fill == "widen" and h < min(searches[i].k, n_docs) and pool < n_chunks:
                        pools[i] = min(2 * pool, n_chunks)
                        retry.append(i)
            todo = retry
        del graph
    # then those of the pools widened meanwhile (and whatever the builds left no time for)
    checks.beside_graphs = False
    flags: list[np.ndarray] = [np.ones(len(p), dtype=bool) for p, _ in dense]
    if recall_check:
        checks.plan(_check_rows(searches, pools), drop_unwanted=True)
        while checks.step():
            pass
    for i, s in enumerate(searches):
        if s.ann_seed is not None and not recall_check:
            flags[i] = np.full(len(dense[i][0]), -1, dtype=np.int8)
        elif s.ann_seed is not None:
            flags[i] = np.isin(dense[i][0], checks.done[(pools[i], s.key)])
    return dense, pools, flags, timing


def _check_rows(searches: Sequence[Search], pools: list[int]) -> dict[tuple, int]:
    """Per distinct ``(pool, key)`` of the HNSW searches, its first search's row, in search order."""
    rows: dict[tuple, int] = {}
    for i, s in enumerate(searches):
        if s.ann_seed is not None:
            rows.setdefault((pools[i], s.key), i)
    return rows


class _ExactChecks:
    """The recall check's exact top-``pool`` searches, one per distinct ``(pool, key)``, run in units of
    ``UNIT`` vectors of one pool (``topk_inner_product``'s query batch: a unit gives the rows a single call
    over all of them would), in the order planned, so the result never depends on when a unit runs (with
    OpenBLAS, which splits a product by rows and columns, not along the summed dimension, nor on the BLAS
    threads a unit ran with; another BLAS may round the last bit differently, which moves a flag only at
    an exact tie on the pool's edge).
    ``timing["recall_check"]`` adds the units' seconds, ``timing["recall_check_beside_graphs"]`` those
    run while a graph was still being built or loaded (:func:`ingest.rewriting.ann.graphs_in_turn`'s ``idle``)."""

    UNIT = 512

    def __init__(self, index_vectors: np.ndarray, vectors: np.ndarray, timing: dict[str, float]):
        self.index_vectors, self.vectors, self.timing = index_vectors, vectors, timing
        self.done: dict[tuple, np.ndarray] = {}
        self._planned: set[tuple] = set()
        self._units: list[tuple[int, list[tuple[tuple, int]]]] = []
        self.beside_graphs = True  # the graph loop sets it False once every graph is built
        timing.update(recall_check=0.0, recall_check_beside_graphs=0.0)

    def plan(self, wanted: dict[tuple, int], drop_unwanted: bool = False) -> None:
        """Add the searches ``(pool, key) -> a row of vectors`` not planned yet, pool by pool ascending, each
        pool's in ``wanted``'s order; ``drop_unwanted``: first drop the units not run yet that hold none of
        ``wanted`` (their texts' pools were widened; whole units, so no unit's rows change)."""
        if drop_unwanted:
            self._units = [(pool, items) for pool, items in self._units if any(pk in wanted for pk, _ in items)]
        new = [(pk, row) for pk, row in wanted.items() if pk not in self._planned]
        self._planned.update(pk for pk, _ in new)
        for pool in sorted({pk[0] for pk, _ in new}):
            items = [(pk, row) for pk, row in new if pk[0] == pool]
            self._units += [(pool, items[lo : lo + self.UNIT]) for lo in range(0, len(items), self.UNIT)]

    def step(self) -> bool:
        """Run the next unit; whether more are left."""
        if self._units:
            t = time.perf_counter()
            pool, items = self._units.pop(0)
            exact, _ = topk_inner_product(
                self.vectors[[row for _, row in items]], self.index_vectors, pool, query_batch=self.UNIT
            )
            self.done.update((pk, e) for (pk, _), e in zip(items, exact))
            seconds = time.perf_counter() - t
            self.timing["recall_check"] += seconds
            if self.beside_graphs:
                self.timing["recall_check_beside_graphs"] += seconds
        return bool(self._units)


def _batched_mmr(
    index: ChunkIndex, ordered, candidates: list[np.ndarray], k: np.ndarray, lam: float, batch: int = 256
) -> list[np.ndarray]:
    """Per search, its first ``k[i]`` MMR picks as indices into its rerank order (``candidates`` are such
    indices), the pools of ``batch`` searches padded and run together with the batch's largest ``k``
    (:func:`ingest.rewriting.mmr.mmr_batch`; picks are prefix-stable, so each keeps its own first ``k[i]``)."""
    out: list[np.ndarray | None] = [None] * len(candidates)
    dim = index.vectors.shape[1]
    by_width = sorted(range(len(candidates)), key=lambda i: len(candidates[i]))  # little padding per batch
    for lo in range(0, len(by_width), batch):
        part = by_width[lo : lo + batch]
        width = max(len(candidates[i]) for i in part)
        scores = np.full((len(part), width), np.nan)
        vectors = np.zeros((len(part), width, dim), dtype=np.float32)
        for row, i in enumerate(part):
            r_pos, r_score, _, _ = ordered[i]
            c = candidates[i]
            scores[row, : len(c)] = r_score[c]
            vectors[row, : len(c)] = index.vectors[r_pos[c]]
        picks = mmr_batch(scores, vectors, int(max(k[i] for i in part)), lam)
        for row, i in enumerate(part):
            p = picks[row]
            out[i] = candidates[i][p[p >= 0]][: int(k[i])]
    return out  # type: ignore[return-value]
