"""TREC exports: any stored run as a TREC run file plus the matching qrels, for ranx or trec_eval.

Run file lines: ``<query_id> Q0 <docno> <rank> <score> <tag>`` (rank 1-based, as stored in ``runs``;
tag = ``<condition>|<embedder>|<reranker>``). Qrels lines: ``<query_id> 0 <docno> <relevance>``.

Levels:

* ``chunk`` — docno is the ``chunk_id``; a chunk is relevant (1) to a query iff it lies in the
  query's document and, for some gold span ``[s0, s1)`` of the query, with chunk ``[c0, c1)`` and
  overlap ``o = max(0, min(c1, s1) - max(c0, s0))``: ``o >= 0.5 (s1 - s0)`` (covers half the span) or
  ``o >= 0.8 (c1 - c0)`` (lies mostly inside it) — the relevance rule of the evaluation models,
  applied to every chunk of the condition's index (not only retrieved ones), so recall-type
  measures see every relevant chunk. Offsets are content-only: prefixes never create relevance.
* ``document`` — docno is the ``doc_id``; the run keeps each document's best-ranked chunk (rank
  order, re-numbered 1..n, the chunk's score); qrels are ``qrels`` rows where the corpus has them
  (BEIR, HotpotQA), else the query's own document (relevance 1) for every query with evidence.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

LEVELS = ("chunk", "document")


class ExportError(ValueError):
    """Nothing to export as asked; the message says which run exists instead."""


@dataclass(frozen=True)
class TrecExport:
    run_file: Path
    qrels_file: Path
    n_queries: int
    run_lines: int
    qrels_lines: int


def _available(con: duckdb.DuckDBPyConnection) -> str:
    rows = con.execute(
        "SELECT DISTINCT corpus, condition, embedder, reranker FROM runs ORDER BY ALL").fetchall()
    return "; ".join(" ".join(map(str, r)) for r in rows[:20]) or "none (run `ragwh run` first)"


def _run_sql(level: str) -> str:
    if level == "chunk":
        return """
            SELECT r.query_id, r.chunk_id AS docno, r.rank, r.score
            FROM runs r WHERE r.corpus = $corpus AND r.condition = $condition AND r.embedder = $embedder
              AND r.reranker = $reranker
            ORDER BY r.query_id, r.rank"""
    return """
        WITH hits AS (
            SELECT r.query_id, c.doc_id AS docno, r.rank, r.score,
                   row_number() OVER (PARTITION BY r.query_id, c.doc_id ORDER BY r.rank) AS nth
            FROM runs r JOIN chunks c USING (chunk_id)
            WHERE r.corpus = $corpus AND r.condition = $condition AND r.embedder = $embedder
              AND r.reranker = $reranker)
        SELECT query_id, docno, row_number() OVER (PARTITION BY query_id ORDER BY rank) AS rank, score
        FROM hits WHERE nth = 1 ORDER BY query_id, rank"""


def _qrels_sql(level: str, has_qrels: bool) -> str:
    if level == "chunk":
        return """
            WITH idx AS (
                SELECT DISTINCT ct.chunk_id, ct.doc_id, ct.char_start, ct.char_end
                FROM int_condition_texts ct WHERE ct.corpus = $corpus AND ct.condition = $condition),
            q AS (SELECT DISTINCT query_id FROM runs WHERE corpus = $corpus AND condition = $condition
                  AND embedder = $embedder AND reranker = $reranker)
            SELECT e.query_id, i.chunk_id AS docno, 1 AS relevance
            FROM evidence e JOIN q USING (query_id) JOIN idx i ON i.doc_id = e.doc_id
            WHERE greatest(0, least(i.char_end, e.char_end) - greatest(i.char_start, e.char_start))
                  >= 0.5 * (e.char_end - e.char_start)
               OR greatest(0, least(i.char_end, e.char_end) - greatest(i.char_start, e.char_start))
                  >= 0.8 * (i.char_end - i.char_start)
            GROUP BY ALL ORDER BY e.query_id, docno"""
    q = """q AS (SELECT DISTINCT query_id FROM runs WHERE corpus = $corpus AND condition = $condition
                 AND embedder = $embedder AND reranker = $reranker)"""
    if has_qrels:
        return f"WITH {q} SELECT query_id, doc_id AS docno, relevance FROM qrels JOIN q USING (query_id) " \
               "WHERE relevance > 0 ORDER BY query_id, docno"
    return f"""WITH {q} SELECT DISTINCT e.query_id, e.doc_id AS docno, 1 AS relevance
               FROM evidence e JOIN q USING (query_id) ORDER BY e.query_id, docno"""


def export_trec(con: duckdb.DuckDBPyConnection, condition: str, out_dir: str | Path, *, corpus: str | None = None,
                embedder: str | None = None, reranker: str = "none", level: str = "chunk") -> TrecExport:
    """Write ``<out_dir>/<tag>.run`` and ``<tag>.qrels`` for one stored run (see module docstring).

    ``corpus`` and ``embedder`` may be omitted when the condition's runs have exactly one."""
    if level not in LEVELS:
        raise ExportError(f"level {level!r} unknown: use one of {', '.join(LEVELS)}")
    cells = con.execute(
        "SELECT DISTINCT corpus, embedder FROM runs WHERE condition = ? AND reranker = ? "
        "AND (? IS NULL OR corpus = ?) AND (? IS NULL OR embedder = ?) ORDER BY ALL",
        [condition, reranker, corpus, corpus, embedder, embedder]).fetchall()
    if not cells:
        raise ExportError(f"no run for condition={condition} reranker={reranker} corpus={corpus or '*'} "
                          f"embedder={embedder or '*'}; stored runs (corpus condition embedder reranker): {_available(con)}")
    if len(cells) > 1:
        raise ExportError(f"condition {condition} has runs for several (corpus, embedder): {cells}; pass --corpus/--embedder")
    corpus, embedder = cells[0]
    params = {"corpus": corpus, "condition": condition, "embedder": embedder, "reranker": reranker}
    has_qrels = con.execute("SELECT count(*) FROM qrels q JOIN queries USING (query_id) WHERE corpus = ?",
                            [corpus]).fetchone()[0] > 0
    if level == "chunk" and has_qrels:
        raise ExportError(f"corpus {corpus} has document-level judgments (qrels) only: use --level document")
    run = con.execute(_run_sql(level), params).fetchall()
    qrels = con.execute(_qrels_sql(level, has_qrels), params).fetchall()
    tag = f"{condition}|{embedder}|{reranker}"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{corpus}_{condition}_{embedder}_{reranker}_{level}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    run_file, qrels_file = out / f"{safe}.run", out / f"{safe}.qrels"
    with open(run_file, "w", encoding="utf-8") as handle:
        for query_id, docno, rank, score in run:
            handle.write(f"{query_id} Q0 {docno} {rank} {score!r} {tag}\n")
    with open(qrels_file, "w", encoding="utf-8") as handle:
        for query_id, docno, relevance in qrels:
            handle.write(f"{query_id} 0 {docno} {relevance}\n")
    return TrecExport(run_file, qrels_file, len({r[0] for r in run}), len(run), len(qrels))
