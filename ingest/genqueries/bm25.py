"""BM25 gold-top-1 rate: how often a purely lexical ranker puts a gold unit first.

Units are the corpus's ``structural:gold`` chunks when it has them, else its paragraphs (the report
names which). Each unit's text is ``documents.text[char_start:char_end]``; queries and units are
tokenized like the leakage filter (rouge-score's tokenizer, unstemmed). Scores are BM25 from ``bm25s``
(:mod:`ingest.retrieval.bm25`, Lucene variant) with k1 = 1.5, b = 0.75 over all units of the corpus;
the top unit is the first maximum in unit order (doc_id, char_start). A query counts as a hit when
its top unit overlaps one of its evidence spans (same document, ``max(starts) < min(ends)``).
"""

from __future__ import annotations

from collections import defaultdict

import duckdb
import numpy as np

from ingest.genqueries.leakage import tokens
from ingest.retrieval.bm25 import BM25Settings, build_index
from ingest.retrieval.topk import topk_rows

#: the diagnostic's BM25: bm25s's own defaults (and those of rank_bm25's Okapi, which it replaces)
SETTINGS = BM25Settings(name="bm25-diagnostic", k1=1.5, b=0.75, method="lucene")


def bm25_top1(con: duckdb.DuckDBPyConnection, corpus: str, query_ids: list[str]) -> dict:
    """Top-1 gold rate over ``query_ids`` (overall and per query type) and the unit kind used."""
    units = con.execute(
        "SELECT c.doc_id, c.char_start, c.char_end, d.text FROM chunks c JOIN documents d USING (doc_id) "
        "WHERE c.chunkset = 'structural:gold' AND d.corpus = ? ORDER BY c.doc_id, c.char_start",
        [corpus],
    ).fetchall()
    kind = "structural:gold chunks"
    if not units:
        units = con.execute(
            "SELECT p.doc_id, p.char_start, p.char_end, d.text FROM paragraphs p JOIN documents d USING (doc_id) "
            "WHERE d.corpus = ? ORDER BY p.doc_id, p.char_start",
            [corpus],
        ).fetchall()
        kind = "paragraphs"
    if not units or not query_ids:
        return {"units": kind, "n_units": len(units), "queries": 0, "top1_gold_rate": None, "by_type": {}}
    index = build_index([tokens(text[s:e]) for _, s, e, text in units], SETTINGS)
    wanted = set(query_ids)
    queries = [
        q
        for q in con.execute(
            "SELECT query_id, text, query_type FROM queries WHERE corpus = ? ORDER BY query_id", [corpus]
        ).fetchall()
        if q[0] in wanted
    ]
    spans: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for qid, doc_id, s, e in con.execute(
        "SELECT query_id, doc_id, char_start, char_end FROM evidence WHERE starts_with(query_id, ?) ORDER BY 1, span_idx",
        [corpus + "/"],
    ).fetchall():
        spans[qid].append((doc_id, s, e))
    hits: dict[str, list[bool]] = defaultdict(list)
    best, _ = (
        topk_rows(index.scores([tokens(text) for _, text, _ in queries]), 1) if queries else (np.zeros((0, 1)), None)
    )
    for (qid, text, qtype), top_pos in zip(queries, best[:, 0]):
        top = units[int(top_pos)]
        hit = any(d == top[0] and max(s, top[1]) < min(e, top[2]) for d, s, e in spans[qid])
        hits[qtype].append(hit)
    every = [h for hs in hits.values() for h in hs]
    return {
        "units": kind,
        "n_units": len(units),
        "queries": len(every),
        "top1_gold_rate": float(np.mean(every)),
        "by_type": {t: {"queries": len(h), "top1_gold_rate": float(np.mean(h))} for t, h in sorted(hits.items())},
    }
