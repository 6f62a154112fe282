"""Every choice of the rewriting study's fixed pipeline, with its default (docs/rewriting.md explains each).

:class:`RewriteSettings` is the one place these values live: the experiment config
(``ragwh/experiment/config/rewriting.py``) reads overrides into it, the stage reads it, and its
:meth:`RewriteSettings.fingerprint` is part of the stage's manifest fingerprint.
"""

from __future__ import annotations

import dataclasses
import json

from ingest.chunking.sentence_windows import CHUNK_TOKENS, OVERLAP_TOKENS
from ingest.rewriting.ann import RUN_SEED_LIMIT, AnnParams, graph_seeds

SEEDS = (42, 123, 2024)
MMR_UNITS = ("documents", "chunks")
HYDE_COMBINE = ("none", "average")
ENCODINGS = ("query", "passage")
RERANK_WITH = ("text", "original")
DENSE = ("hnsw", "exact")
#: ``fixed``: the paper's fixed chunk pool (a list may hold fewer than K documents); ``widen``: the pool doubles
POOL_FILL = ("fixed", "widen")
#: under exact search there is no index seed, so S1-ann4 would be S1 again: refused, not run as a duplicate
ANN4_NEEDS_HNSW = (
    "S1-ann4 is the multi-pass HNSW control: it needs rewriting.dense: hnsw; remove it from "
    "rewriting.strategies (the default list includes it) or set rewriting.dense: hnsw"
)


@dataclasses.dataclass(frozen=True)
class RewriteSettings:
    """The study's pipeline for one corpus and stack.

    - ``strategies`` (names of ``seeds/rewrite_strategies.csv``) and the LLM ``seeds`` (sampling seed of
      every request; LLM-free strategies are computed once and written under every seed). A seed is also
      its run's HNSW index seed, so seeds lie in ``[0, 2^30)`` (S1-ann4's extra graphs take the seeds
      above, :func:`ingest.rewriting.ann.graph_seeds`) and 0 and 1 are not both used under ``dense: hnsw``.
    - ``pool``: dense candidates reranked per text (20; the control ``S1-pool100`` uses its own 100).
    - ``pool_fill``: ``fixed`` (default, the paper's: the cross-encoder and MMR see exactly ``pool`` chunks,
      so a text's list holds fewer than its K documents when long documents fill several pooled chunks) or
      ``widen`` (the project's variant: the pool doubles, 2P, 4P, ..., until it holds K distinct documents;
      the widened size is ``rewrite_text_runs.pool``). Mart ``rewrite_list_lengths`` counts the short lists.
    - ``mmr_lambda`` (0.85) and ``mmr_unit``: MMR over ``documents`` (the reranked pool collapsed to each
      document's best chunk, similarity = cosine of the best chunks' stored vectors) or ``chunks``.
    - ``include_original``: multi-query strategies (S2, S3, S4) search the original query too.
    - ``cosine_band`` ``[lo, hi]`` (0.4, 0.9, inclusive) and ``cosine_filter``: the strategies whose
      variants must fall in the band (S2, S3, S4; HyDE passages and Query2Doc texts are not questions).
    - ``n_variants``: lines asked of the LLM per answer (S2: 5, S3: 3, S4: 1; the paper's S2 "generates
      the most query variations").
    - ``hyde_passages`` (1) generated passages; ``hyde_combine``: ``none`` (each passage searched as a
      text of its own) or ``average`` (one search with the normalized mean of the query's and the
      passages' vectors, as the HyDE reference does); ``hyde_encoding``: ``passage`` (the document
      encoder, as the HyDE reference encodes generated documents) or ``query``.
    - ``q2d_encoding``: the Query2Doc text ``query [SEP] pseudo-doc`` is a query (``query``) by default.
    - ``rerank_with``: the cross-encoder scores (``text`` searched, chunk) or (``original`` query, chunk).
    - ``max_merged`` (20): documents kept after the max-score merge.
    - ``temperature`` (0.7), ``max_tokens`` (256): sampling of every rewriting request.
    - ``chunk_tokens`` / ``chunk_overlap`` (512 / 50): the sentence-window chunkset searched.
    - ``dense``: ``hnsw`` (the paper's approximate vector store; the index seed is the run seed, so three
      seeds give three graphs) or ``exact`` (brute force, for checks); ``ann_m`` (16),
      ``ann_ef_construction`` (100), ``ann_ef_search`` (20): the HNSW settings; ``ann_graphs`` (4): the
      graphs of the control S1-ann4 (:func:`ingest.rewriting.ann.graph_seeds`; :mod:`ingest.rewriting.ann`).
      S1-ann4 under ``dense: exact`` is refused (:data:`ANN4_NEEDS_HNSW`): exact search has no index seed,
      so its four searches would be S1's one, a duplicate of S1 in the budget table.
    - ``ann_recall_check`` (true): every HNSW pool's recall against exact search (``in_exact``, mart
      ``rewrite_ann_recall``), one exact search per distinct text and pool; false skips it (NULL).
    - ``ann_build_workers`` (0: as many as the usable cores, at most 16, that fit in memory): HNSW graphs
      built at once, each on one thread. It changes how long the stage takes, never a graph (a graph built
      on one thread is the same whichever thread builds it), so it is not part of :meth:`fingerprint`.
    """

    strategies: tuple[str, ...] = ("S1", "S2", "S3", "S4", "HyDE", "Q2D", "S1-pool100", "S1-ann4")
    seeds: tuple[int, ...] = SEEDS
    pool: int = 20
    pool_fill: str = "fixed"
    mmr_lambda: float = 0.85
    mmr_unit: str = "documents"
    include_original: bool = True
    cosine_band: tuple[float, float] = (0.4, 0.9)
    cosine_filter: tuple[str, ...] = ("S2", "S3", "S4")
    n_variants: tuple[tuple[str, int], ...] = (("S2", 5), ("S3", 3), ("S4", 1))
    hyde_passages: int = 1
    hyde_combine: str = "none"
    hyde_encoding: str = "passage"
    q2d_encoding: str = "query"
    rerank_with: str = "text"
    max_merged: int = 20
    temperature: float = 0.7
    max_tokens: int = 256
    chunk_tokens: int = CHUNK_TOKENS
    chunk_overlap: int = OVERLAP_TOKENS
    dense: str = "hnsw"
    ann_graphs: int = 4
    ann_m: int = 16
    ann_ef_construction: int = 100
    ann_ef_search: int = 20
    ann_recall_check: bool = True
    ann_build_workers: int = 0

    def __post_init__(self) -> None:
        problems = []
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            problems.append(f"seeds must be distinct and non-empty, got {self.seeds}")
        if self.pool < 1 or self.max_merged < 1 or self.hyde_passages < 1 or self.max_tokens < 1:
            problems.append("pool, max_merged, hyde_passages and max_tokens must be >= 1")
        if not 0.0 <= self.mmr_lambda <= 1.0:
            problems.append(f"mmr_lambda must be in [0, 1], got {self.mmr_lambda}")
        lo, hi = self.cosine_band
        if not -1.0 <= lo <= hi <= 1.0:
            problems.append(f"cosine_band must satisfy -1 <= lo <= hi <= 1, got {self.cosine_band}")
        for name, value, allowed in (
            ("mmr_unit", self.mmr_unit, MMR_UNITS),
            ("hyde_combine", self.hyde_combine, HYDE_COMBINE),
            ("hyde_encoding", self.hyde_encoding, ENCODINGS),
            ("q2d_encoding", self.q2d_encoding, ENCODINGS),
            ("rerank_with", self.rerank_with, RERANK_WITH),
            ("dense", self.dense, DENSE),
            ("pool_fill", self.pool_fill, POOL_FILL),
        ):
            if value not in allowed:
                problems.append(f"{name} {value!r} is not one of {', '.join(allowed)}")
        if not 0 <= self.chunk_overlap < self.chunk_tokens:
            problems.append(
                f"chunk overlap must satisfy 0 <= overlap < tokens, got {self.chunk_tokens}/{self.chunk_overlap}"
            )
        if min(self.ann_m, self.ann_ef_construction, self.ann_ef_search, self.ann_graphs) < 1:
            problems.append("ann m, ef_construction, ef_search and graphs must be >= 1")
        if self.ann_build_workers < 0:
            problems.append(f"ann build_workers must be >= 1 (or 0: automatic), got {self.ann_build_workers}")
        if any(not 0 <= s < RUN_SEED_LIMIT for s in self.seeds):
            problems.append(
                f"seeds must lie in [0, 2^30 = {RUN_SEED_LIMIT}) (a run seed is its HNSW index seed; the "
                f"extra graphs of S1-ann4 take the seeds above), got {self.seeds}"
            )
        if {0, 1} <= set(self.seeds) and (self.dense == "hnsw" or "S1-ann4" in self.strategies):
            problems.append(
                "seeds 0 and 1 give the same HNSW graph (hnswlib seeds its level generator with 0 as 1): "
                "use another seed"
            )
        if self.dense == "exact" and "S1-ann4" in self.strategies:
            problems.append(ANN4_NEEDS_HNSW)
        if any(n < 1 for _, n in self.n_variants):
            problems.append("n_variants must be >= 1")
        if problems:
            raise ValueError("; ".join(problems))

    def variants_of(self, strategy: str) -> int:
        """Lines asked of the LLM for a question-form strategy."""
        return dict(self.n_variants).get(strategy, 1)

    def ann(self) -> AnnParams:
        """The HNSW settings of every graph of the run."""
        return AnnParams(self.ann_m, self.ann_ef_construction, self.ann_ef_search)

    def index_seeds(self, form: str, seed: int) -> tuple[int | None, ...]:
        """The HNSW graphs a strategy of ``form`` searches at run seed ``seed`` (None: exact search)."""
        if form == "ann":
            return graph_seeds(seed, self.ann_graphs)
        return (seed,) if self.dense == "hnsw" else (None,)

    def fingerprint(self) -> str:
        """Canonical JSON of every field that can change a row (part of the stage fingerprint): all but
        ``ann_build_workers``; ``ann_recall_check`` only when false under ``dense: hnsw`` (the stage always
        checked before the setting existed, so the settings' JSON of a default run is what it was; under
        ``dense: exact`` no pool is checked either way)."""
        fields = dataclasses.asdict(self)
        del fields["ann_build_workers"]
        if fields["ann_recall_check"] or fields["dense"] == "exact":
            del fields["ann_recall_check"]
        return json.dumps(fields, sort_keys=True)
