"""Arrow tables of the three lineage tables the rewriting stage writes (columns from ``warehouse/schema.py``).

``rewrites``: one row per candidate text. ``rewrite_text_runs``: per searched text its ``dense`` pool,
its ``rerank`` order (both ``pool`` rows) and its ``mmr`` documents (at most ``depth_k`` rows), ranks
1-based. ``rewrite_runs``: the merged documents (:func:`ingest.rewriting.merge.max_merge`).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa

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


def rewrites_table(corpus: str, embedder: str, rows: list[tuple[str, str, int, Candidate]]) -> pa.Table:
    """``rows`` = (query_id, strategy, seed, candidate)."""
    return pa.Table.from_pydict({
        "corpus": [corpus] * len(rows), "embedder": [embedder] * len(rows),
        "query_id": [r[0] for r in rows], "strategy": [r[1] for r in rows], "seed": [r[2] for r in rows],
        "variant_idx": [r[3].variant_idx for r in rows], "text": [r[3].text for r in rows],
        "cosine": [r[3].cosine for r in rows], "kept": [r[3].kept for r in rows],
        "reason": [r[3].reason for r in rows], "llm_call_key": [r[3].llm_call_key for r in rows],
    }, schema=arrow_schema("rewrites"))


def text_runs_table(corpus: str, embedder: str, reranker: str, index: ChunkIndex, runs: list[TextRun],
                    outputs: list[Output]) -> pa.Table:
    """Every output's dense, rerank and mmr rows (vectorized over outputs)."""
    parts: dict[str, list] = {k: [] for k in ("o", "stage", "rank", "pos", "score")}
    for stage_name in ("dense", "rerank", "mmr"):
        for o_idx, o in enumerate(outputs):
            run = runs[o.run]
            if stage_name == "dense":
                pos, score = run.dense_pos, run.dense_score
            elif stage_name == "rerank":
                pos, score = run.rerank_pos, run.rerank_score
            else:
                pos, score = run.mmr_pos[:o.depth_k], run.mmr_score[:o.depth_k]
            parts["o"].append(np.full(len(pos), o_idx, dtype=np.int64))
            parts["stage"].append(np.full(len(pos), stage_name, dtype=object))
            parts["rank"].append(np.arange(1, len(pos) + 1, dtype=np.int32))
            parts["pos"].append(np.asarray(pos, dtype=np.int64))
            parts["score"].append(np.asarray(score, dtype=np.float64))
    cat = {k: np.concatenate(v) if v else np.zeros(0) for k, v in parts.items()}
    o_of = cat["o"].astype(np.int64)
    strategy = np.array([o.strategy for o in outputs], dtype=object)
    seed = np.array([o.seed for o in outputs], dtype=np.int32)
    query = np.array([o.query_id for o in outputs], dtype=object)
    variant = np.array([o.variant_idx for o in outputs], dtype=np.int32)
    pool = np.array([o.pool for o in outputs], dtype=np.int32)
    pos = cat["pos"].astype(np.int64)
    n = len(o_of)
    return pa.Table.from_pydict({
        "corpus": pa.array([corpus] * n, pa.string()), "embedder": pa.array([embedder] * n, pa.string()),
        "reranker": pa.array([reranker] * n, pa.string()), "pool": pa.array(pool[o_of]),
        "strategy": pa.array(strategy[o_of].tolist(), pa.string()), "seed": pa.array(seed[o_of]),
        "query_id": pa.array(query[o_of].tolist(), pa.string()), "variant_idx": pa.array(variant[o_of]),
        "stage": pa.array(cat["stage"].tolist(), pa.string()), "rank": pa.array(cat["rank"].astype(np.int32)),
        "chunk_id": pa.array(index.chunk_ids[pos].tolist(), pa.string()),
        "doc_id": pa.array(index.doc_ids[pos].tolist(), pa.string()),
        "score": pa.array(cat["score"].astype(np.float64)),
    }, schema=arrow_schema("rewrite_text_runs"))


def runs_table(corpus: str, embedder: str, reranker: str,
               merged: list[tuple[str, int, str, list[tuple[str, float, int]]]]) -> pa.Table:
    """``merged`` = (strategy, seed, query_id, [(doc_id, score, variant_idx)] in rank order)."""
    cols: dict[str, list] = {k: [] for k in ("strategy", "seed", "query_id", "rank", "doc_id", "score", "variant_idx")}
    for strategy, seed, query_id, docs in merged:
        for rank, (doc, score, variant) in enumerate(docs, 1):
            for k, v in zip(cols, (strategy, seed, query_id, rank, doc, score, variant)):
                cols[k].append(v)
    n = len(cols["rank"])
    return pa.Table.from_pydict({"corpus": [corpus] * n, "embedder": [embedder] * n, "reranker": [reranker] * n, **cols},
                                schema=arrow_schema("rewrite_runs"))
