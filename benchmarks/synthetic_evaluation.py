"""Synthetic warehouse for the evaluation models: documents, three chunksets, prefixes, queries with
gold spans, runs for every condition and cell, and routing, generated vectorized from one seed.

Used by ``benchmarks/bench_evaluation.py`` at paper scale (4,303 queries over 1,585 documents,
12 conditions, 2 embedders x 2 reranker settings, top 50, 1-6 gold spans per query) and by
``tests/udfs/test_evaluation_dbt.py`` at toy scale. Runs are random but not uniform: a condition's
``quality`` raises the chance that chunks overlapping the evidence rank high, so contrasts have
real, known-sign effects.
"""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.db import replace_where, transaction

CONDITIONS = {  # condition -> (chunkset, prefix_kind, depth, quality)
    "A1": ("fixed", "llm_context", 0, 0.55), "A2": ("structural:induced:texttiling", "none", 0, 0.50),
    "A3-d1": ("structural:induced:texttiling", "path", 1, 0.55), "A3-d2": ("structural:induced:texttiling", "path", 2, 0.60),
    "A3": ("structural:induced:texttiling", "path", 3, 0.65), "A4": ("structural:induced:texttiling", "path", 3, 0.62),
    "P": ("structural:induced:texttiling", "placebo", 3, 0.52), "G2": ("structural:gold", "none", 0, 0.55),
    "G3-d1": ("structural:gold", "path", 1, 0.60), "G3-d2": ("structural:gold", "path", 2, 0.65),
    "G3": ("structural:gold", "path", 3, 0.70), "G4": ("structural:gold", "path", 3, 0.68),
}
CHUNKSETS = ("fixed", "structural:induced:texttiling", "structural:gold")
QUERY_TYPES = np.array(["extractive", "abstractive", "boolean", "none"])


@dataclass(frozen=True)
class Scale:
    n_docs: int = 1585
    n_queries: int = 4303
    embedders: tuple[str, ...] = ("all-MiniLM-L6-v2", "BAAI/bge-large-en-v1.5")
    rerankers: tuple[str, ...] = ("none", "BAAI/bge-reranker-v2-m3")
    k: int = 50
    chunks_per_doc: tuple[int, int] = (15, 40)
    corpus: str = "qasper"


def _cuts(rng: np.random.Generator, lengths: np.ndarray, n_chunks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contiguous tilings: per document sorted distinct cut points -> (doc, start, end) per chunk."""
    docs, starts, ends = [], [], []
    for d, (length, n) in enumerate(zip(lengths, n_chunks)):
        inner = np.sort(rng.choice(np.arange(1, length), size=n - 1, replace=False))
        b = np.concatenate([[0], inner, [length]])
        docs.append(np.full(n, d))
        starts.append(b[:-1])
        ends.append(b[1:])
    return np.concatenate(docs), np.concatenate(starts), np.concatenate(ends)


def load_synthetic(con: duckdb.DuckDBPyConnection, scale: Scale = Scale(), seed: int = 7) -> dict[str, int]:
    """Write the synthetic tables into ``con`` (one transaction); returns row counts."""
    rng = np.random.default_rng(seed)
    c = scale.corpus
    n_docs = scale.n_docs
    doc_ids = np.array([f"{c}/{i:05d}" for i in range(n_docs)], dtype=object)
    n_chunks = rng.integers(*scale.chunks_per_doc, n_docs)
    lengths = n_chunks * rng.integers(300, 900, n_docs)
    pattern = "lorem ipsum dolor sit amet " * 40
    texts = [(pattern * (int(n) // len(pattern) + 1))[: int(n)] for n in lengths]
    documents = pa.table({"doc_id": doc_ids, "corpus": [c] * n_docs, "title": [f"Doc {i}" for i in range(n_docs)],
                          "text": texts, "topic_bucket": rng.choice(["bio", "geo", "sci"], n_docs).astype(object),
                          "split": ["test"] * n_docs, "source_file": ["synthetic"] * n_docs})
    chunk_tables, chunk_index = [], {}
    for cs in CHUNKSETS:
        per_doc = n_chunks if cs != "fixed" else np.maximum(2, n_chunks + rng.integers(-3, 4, n_docs))
        d, s, e = _cuts(rng, lengths, per_doc)
        idx = np.arange(len(d)) - np.repeat(np.cumsum(per_doc) - per_doc, per_doc)
        ids = np.array([f"{cs}|{doc_ids[a]}|{b}" for a, b in zip(d, idx)], dtype=object)
        chunk_index[cs] = (d, s, e, ids, np.cumsum(per_doc) - per_doc, per_doc)
        chunk_tables.append(pa.table({"chunkset": [cs] * len(d), "chunk_id": ids, "doc_id": doc_ids[d],
                                      "chunk_idx": idx.astype(np.int32), "char_start": s.astype(np.int32),
                                      "char_end": e.astype(np.int32),
                                      "content_tokens": ((e - s) // 4).astype(np.int32),
                                      "section_idx": pa.nulls(len(d), pa.int32())}))
    prefixes = []
    for cs, kinds in (("fixed", [("llm_context", 0)]),
                      ("structural:induced:texttiling", [("path", 1), ("path", 2), ("path", 3), ("placebo", 3)]),
                      ("structural:gold", [("path", 1), ("path", 2), ("path", 3)])):
        ids = chunk_index[cs][3]
        for kind, depth in kinds:
            prefixes.append(pa.table({"chunkset": [cs] * len(ids), "chunk_id": ids, "prefix_kind": [kind] * len(ids),
                                      "depth": np.full(len(ids), depth, np.int32),
                                      "prefix": [f"[{kind} {depth}]\n\n"] * len(ids),
                                      "prefix_tokens": np.full(len(ids), 8 * max(depth, 1) + 4, np.int32)}))
    # queries: every document gets at least one
    q_doc = np.concatenate([np.arange(n_docs), rng.integers(0, n_docs, scale.n_queries - n_docs)])
    n_q = len(q_doc)
    q_ids = np.array([f"{c}/q{i:05d}" for i in range(n_q)], dtype=object)
    queries = pa.table({"query_id": q_ids, "doc_id": doc_ids[q_doc], "corpus": [c] * n_q,
                        "text": [f"question {i}" for i in range(n_q)],
                        "query_type": rng.choice(QUERY_TYPES, n_q).astype(object)})
    n_spans = rng.integers(1, 7, n_q)
    e_q = np.repeat(np.arange(n_q), n_spans)
    span_len = rng.integers(50, 600, len(e_q))
    e_start = (rng.random(len(e_q)) * (lengths[q_doc[e_q]] - span_len)).astype(np.int64)
    evidence = pa.table({"query_id": q_ids[e_q], "span_idx": (np.arange(len(e_q)) - np.repeat(np.cumsum(n_spans) - n_spans, n_spans)).astype(np.int32),
                         "doc_id": doc_ids[q_doc[e_q]], "char_start": e_start.astype(np.int32),
                         "char_end": (e_start + span_len).astype(np.int32), "match_method": ["exact"] * len(e_q)})
    runs = []
    for emb_i, emb in enumerate(scale.embedders):
        for rr_i, rr in enumerate(scale.rerankers):
            for cond, (cs, _, _, quality) in CONDITIONS.items():
                runs.append(_runs(rng, scale, cond, quality + 0.05 * emb_i + 0.03 * rr_i, chunk_index[cs],
                                  q_doc, q_ids, e_q, e_start, e_start + span_len, emb, rr))
    routing = []
    for emb in scale.embedders:
        for cond in ("A4", "G4"):
            routing.append(pa.table({"corpus": [c] * n_q, "embedder": [emb] * n_q, "condition": [cond] * n_q,
                                     "query_id": q_ids, "routed_sections": [[f"{doc_ids[d]}#0"] for d in q_doc],
                                     "section_recall": rng.random(n_q) < 0.8}))
    tables = {"documents": documents, "chunks": pa.concat_tables(chunk_tables), "chunk_prefixes": pa.concat_tables(prefixes),
              "queries": queries, "evidence": evidence, "runs": pa.concat_tables(runs), "routing": pa.concat_tables(routing)}
    with transaction(con):
        for name, table in tables.items():
            replace_where(con, name, "true", [], table)
    return {name: t.num_rows for name, t in tables.items()}


def _runs(rng, scale: Scale, cond: str, quality: float, index, q_doc, q_ids, e_q, e_s, e_e, emb: str, rr: str) -> pa.Table:
    """Top-k per query: the query's own-document chunks ordered by (evidence overlap + noise), the
    better the condition the less noise, interleaved at random depths with chunks of other documents."""
    d, s, e, ids, first, count = index
    n_q, k = len(q_doc), scale.k
    own_n = np.minimum(count[q_doc], rng.integers(3, 15, n_q))
    # overlap of every own-document chunk with the query's first span (vectorized over candidates)
    cand_q = np.repeat(np.arange(n_q), count[q_doc])
    cand = np.repeat(first[q_doc], count[q_doc]) + (np.arange(len(cand_q)) - np.repeat(np.cumsum(count[q_doc]) - count[q_doc], count[q_doc]))
    span0 = np.searchsorted(e_q, np.arange(n_q))
    ov = np.clip(np.minimum(e[cand], e_e[span0][cand_q]) - np.maximum(s[cand], e_s[span0][cand_q]), 0, None)
    key = (ov > 0) * quality + rng.random(len(cand)) * (1 - quality)
    order = np.lexsort((-key, cand_q))
    pos_in_q = np.arange(len(cand_q)) - np.repeat(np.cumsum(count[q_doc]) - count[q_doc], count[q_doc])
    keep = pos_in_q < own_n[cand_q]
    own = cand[order][keep]
    own_q = cand_q[order][keep]
    # other documents' chunks, distinct within a ranking: a stride walk over the chunks outside the
    # query's document with the prime stride 7919 (no repeat within k steps while the number of such
    # chunks is >= k and not a multiple of 7919)
    outside = len(d) - count[q_doc]
    walk = (rng.integers(0, outside)[:, None] + np.arange(k)[None, :] * 7919) % outside[:, None]
    other = np.where(walk >= first[q_doc][:, None], walk + count[q_doc][:, None], walk)
    ranking = other.copy()
    # own chunks take the first own_n slots of a random spread over the ranking
    bias = rng.random((n_q, k)) * (np.arange(1, k + 1) ** (0.5 + quality))
    slots = np.sort(np.argsort(bias, axis=1)[:, :15], axis=1)
    ranking[own_q, slots[own_q, (np.arange(len(own_q)) - np.repeat(np.cumsum(own_n) - own_n, own_n))]] = own
    rows = n_q * k
    rank = np.tile(np.arange(1, k + 1, dtype=np.int32), n_q)
    return pa.table({"corpus": pa.array([scale.corpus] * rows), "embedder": pa.array([emb] * rows),
                     "reranker": pa.array([rr] * rows), "condition": pa.array([cond] * rows),
                     "query_id": pa.array(q_ids).take(pa.array(np.repeat(np.arange(n_q), k))),
                     "rank": rank, "chunk_id": pa.array(ids).take(pa.array(ranking.ravel())),
                     "score": 1.0 - rank / (k + 1.0)})
