"""Arrow tables of the three lineage tables the rewriting stage writes (columns from ``warehouse/schema.py``).

``rewrites``: one row per candidate text. ``rewrite_text_runs``: per searched text its ``dense`` pool,
its ``rerank`` order (both ``pool`` rows: the pool searched, widened when the configured one held fewer
than the text's K documents) and its ``mmr`` documents (K rows: ``depth_k``, or ``max_merged`` for a
strategy's only text), ranks 1-based; dense rows carry ``in_exact``. ``rewrite_runs``: the merged documents (:func:`ingest.rewriting.merge.max_merge`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ingest.rewriting.index import ChunkIndex
from ingest.rewriting.textrun import TextRun
from ingest.rewriting.variants import Candidate
from warehouse.schema import arrow_schema


@dataclasses.dataclass(frozen=True)
class Output:
    """One searched text of one (strategy, seed, query): which run it used and how many documents it keeps."""

    strategy: str
    seed: int
    query_id: str
    variant_idx: int
    run: int
    depth_k: int
    pool: int
    ann_seed: int | None = None  # the HNSW graph searched (S1-ann4), None for exact search


def rewrites_table(corpus: str, embedder: str, rows: list[tuple[str, str, int, Candidate]]) -> pa.Table:
    """``rows`` = (query_id, strategy, seed, candidate)."""
    return pa.Table.from_pydict(
        {
            "corpus": [corpus] * len(rows),
            "embedder": [embedder] * len(rows),
            "query_id": [r[0] for r in rows],
            "strategy": [r[1] for r in rows],
            "seed": [r[2] for r in rows],
            "variant_idx": [r[3].variant_idx for r in rows],
            "text": [r[3].text for r in rows],
            "cosine": [r[3].cosine for r in rows],
            "kept": [r[3].kept for r in rows],
            "reason": [r[3].reason for r in rows],
            "llm_call_key": [r[3].llm_call_key for r in rows],
        },
        schema=arrow_schema("rewrites"),
    )


def text_runs_table(
    corpus: str, embedder: str, reranker: str, index: ChunkIndex, runs: list[TextRun], outputs: list[Output]
) -> pa.Table:
    """Every output's dense, rerank and mmr rows: per stage one concatenation of the runs' arrays, output
    and rank columns from the lengths, string columns gathered by index in Arrow (no per-row Python)."""
    blocks = []
    for stage_name in ("dense", "rerank", "mmr"):
        if stage_name == "dense":
            parts = [(runs[o.run].dense_pos, runs[o.run].dense_score) for o in outputs]
        elif stage_name == "rerank":
            parts = [(runs[o.run].rerank_pos, runs[o.run].rerank_score) for o in outputs]
        else:
            parts = [(runs[o.run].mmr_pos[: o.depth_k], runs[o.run].mmr_score[: o.depth_k]) for o in outputs]
        lengths = np.array([len(p) for p, _ in parts], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(lengths) else lengths
        total = int(lengths.sum())
        blocks.append(
            {
                "o": np.repeat(np.arange(len(outputs)), lengths),
                "stage": np.full(total, ("dense", "rerank", "mmr").index(stage_name), dtype=np.int64),
                "rank": (np.arange(total) - np.repeat(starts, lengths) + 1).astype(np.int32),
                "pos": np.concatenate([p for p, _ in parts]).astype(np.int64) if parts else np.zeros(0, np.int64),
                "score": np.concatenate([sc for _, sc in parts]).astype(np.float64) if parts else np.zeros(0),
                "in_exact": (
                    np.concatenate([_flags(runs[o.run]) for o in outputs])
                    if stage_name == "dense" and outputs
                    else np.zeros(total, dtype=np.int8) - 1
                ),
            }
        )
    cat = {k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]}
    o_of, pos, n = cat["o"], cat["pos"], len(cat["o"])

    def take(values: list, idx: np.ndarray, kind: pa.DataType | None = None) -> pa.Array:
        return pc.take(pa.array(values, kind or pa.string()), pa.array(idx))

    return pa.Table.from_pydict(
        {
            "corpus": pa.array([corpus] * n, pa.string()),
            "embedder": pa.array([embedder] * n, pa.string()),
            "reranker": pa.array([reranker] * n, pa.string()),
            "pool": take([runs[o.run].pool or o.pool for o in outputs], o_of, pa.int32()),
            "strategy": take([o.strategy for o in outputs], o_of),
            "seed": take([o.seed for o in outputs], o_of, pa.int32()),
            "query_id": take([o.query_id for o in outputs], o_of),
            "variant_idx": take([o.variant_idx for o in outputs], o_of, pa.int32()),
            "stage": take(["dense", "rerank", "mmr"], cat["stage"]),
            "rank": pa.array(cat["rank"]),
            "chunk_id": take(index.chunk_ids.tolist(), pos),
            "doc_id": take(index.doc_ids.tolist(), pos),
            "score": pa.array(cat["score"]),
            "ann_seed": take([o.ann_seed for o in outputs], o_of, pa.int32()),
            "in_exact": pa.array(cat["in_exact"] == 1, mask=cat["in_exact"] < 0),
        },
        schema=arrow_schema("rewrite_text_runs"),
    )


def _flags(run: TextRun) -> np.ndarray:
    """A dense pool's exact-membership flags as int8 (1 / 0; every chunk of an exact pool is exact; -1: an
    HNSW pool not checked, written NULL)."""
    flags = run.dense_exact if run.dense_exact is not None else np.ones(len(run.dense_pos), dtype=bool)
    return flags.astype(np.int8)


def runs_table(
    corpus: str, embedder: str, reranker: str, merged: list[tuple[str, int, str, list[tuple[str, float, int]]]]
) -> pa.Table:
    """``merged`` = (strategy, seed, query_id, [(doc_id, score, variant_idx)] in rank order)."""
    cols: dict[str, list] = {k: [] for k in ("strategy", "seed", "query_id", "rank", "doc_id", "score", "variant_idx")}
    for strategy, seed, query_id, docs in merged:
        for rank, (doc, score, variant) in enumerate(docs, 1):
            for k, v in zip(cols, (strategy, seed, query_id, rank, doc, score, variant)):
                cols[k].append(v)
    n = len(cols["rank"])
    return pa.Table.from_pydict(
        {"corpus": [corpus] * n, "embedder": [embedder] * n, "reranker": [reranker] * n, **cols},
        schema=arrow_schema("rewrite_runs"),
    )
