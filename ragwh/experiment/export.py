"""Exports for other tools: any stored run as a TREC run file plus the matching qrels (ranx, trec_eval),
the graded chunk gains of coverage-nDCG, and a condition's exact texts as a BEIR corpus.

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

Graded qrels (chunk level, span corpora: ``<tag>.cov.qrels``): the gain coverage-nDCG gives each chunk
of the condition's index, ``gain(c) = (1/m) Σ_s |c ∩ S_s| / |S_s|`` over the query's m gold spans
(the share of gold characters it covers, :mod:`udfs.metrics.cov_ndcg`), written as the integer
``round(gain · 10^12)`` because TREC qrels (trec_eval, ranx) hold integer grades; nDCG is invariant
to one scale for all gains, so ranx's / trec_eval's linear-gain ``ndcg@10`` on these files re-scores
cov-nDCG@10 (to ~1e-11 from the rounding). Only the scorable queries of the run
(``int_eval_queries.status = 'ok'``) are written, as the mart scores only those. The definitions
coincide when the condition's chunks do not overlap one another (every chunking condition: chunks
tile the body): each gold character is then covered by one chunk, so the static gain equals the
*new* coverage the mart credits and the ideal ordering (gains sorted, descending) equals the mart's
greedy ideal. They differ for overlapping chunks (the rewriting study's sentence windows: an outside
tool credits overlapping characters twice, the mart once and caps at 1), for ties in score (an outside
tool orders equal scores its own way; the mart uses the stored rank), and for queries the mart excludes.

BEIR corpus (``export_corpus``): ``corpus.jsonl`` with ``_id`` = chunk_id, ``title`` '' and ``text`` = the
exact text the condition embeds (prefix + stripped content, ``int_condition_texts.text``; metadata:
doc_id, chunkset, char_start, char_end, is_fallback, text_hash), ``queries.jsonl`` (``_id`` = query_id,
``text``), ``qrels/test.tsv`` (span corpora: the chunk relevance rule above; qrels corpora: each
chunk inherits its document's judgment) and ``export.json`` (what was exported, counts, the rule). An
outside system indexing ``text`` indexes exactly the warehouse's units; its TREC run over the chunk ids
comes back with ``ragwh import run``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

LEVELS = ("chunk", "document")
#: graded qrels hold gain x GAIN_SCALE as integers (module docstring)
GAIN_SCALE = 10**12


class ExportError(ValueError):
    """Nothing to export as asked; the message says which run exists instead."""


@dataclass(frozen=True)
class TrecExport:
    run_file: Path
    qrels_file: Path
    n_queries: int
    run_lines: int
    qrels_lines: int
    graded_file: Path | None = None  # <tag>.cov.qrels (chunk level, span corpora)
    graded_lines: int = 0


def _available(con: duckdb.DuckDBPyConnection) -> str:
    rows = con.execute("SELECT DISTINCT corpus, condition, embedder, reranker FROM runs ORDER BY ALL").fetchall()
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
        return (
            f"WITH {q} SELECT query_id, doc_id AS docno, relevance FROM qrels JOIN q USING (query_id) "
            "WHERE relevance > 0 ORDER BY query_id, docno"
        )
    return f"""WITH {q} SELECT DISTINCT e.query_id, e.doc_id AS docno, 1 AS relevance
               FROM evidence e JOIN q USING (query_id) ORDER BY e.query_id, docno"""


def export_trec(
    con: duckdb.DuckDBPyConnection,
    condition: str,
    out_dir: str | Path,
    *,
    corpus: str | None = None,
    embedder: str | None = None,
    reranker: str = "none",
    level: str = "chunk",
) -> TrecExport:
    """Write ``<out_dir>/<tag>.run`` and ``<tag>.qrels`` for one stored run (see module docstring).

    ``corpus`` and ``embedder`` may be omitted when the condition's runs have exactly one."""
    if level not in LEVELS:
        raise ExportError(f"level {level!r} unknown: use one of {', '.join(LEVELS)}")
    from ragwh.experiment.names import UnknownName, resolve_model, stored

    try:  # a bare model name means its stored precision variant (all-MiniLM-L6-v2 -> all-MiniLM-L6-v2@bf16)
        if embedder is not None:
            embedder = resolve_model(embedder, stored(con, "runs", "embedder"), "embedder")
        if reranker != "none":
            reranker = resolve_model(reranker, stored(con, "runs", "reranker"), "reranker")
    except UnknownName as exc:
        raise ExportError(str(exc)) from None
    cells = con.execute(
        "SELECT DISTINCT corpus, embedder FROM runs WHERE condition = ? AND reranker = ? "
        "AND (? IS NULL OR corpus = ?) AND (? IS NULL OR embedder = ?) ORDER BY ALL",
        [condition, reranker, corpus, corpus, embedder, embedder],
    ).fetchall()
    if not cells:
        raise ExportError(
            f"no run for condition={condition} reranker={reranker} corpus={corpus or '*'} "
            f"embedder={embedder or '*'}; stored runs (corpus condition embedder reranker): {_available(con)}"
        )
    if len(cells) > 1:
        raise ExportError(
            f"condition {condition} has runs for several (corpus, embedder): {cells}; pass --corpus/--embedder"
        )
    corpus, embedder = cells[0]
    params = {"corpus": corpus, "condition": condition, "embedder": embedder, "reranker": reranker}
    has_qrels = (
        con.execute("SELECT count(*) FROM qrels q JOIN queries USING (query_id) WHERE corpus = ?", [corpus]).fetchone()[
            0
        ]
        > 0
    )
    if level == "chunk" and has_qrels:
        raise ExportError(f"corpus {corpus} has document-level judgments (qrels) only: use --level document")
    run = con.execute(_run_sql(level), params).fetchall()
    qrels = con.execute(_qrels_sql(level, has_qrels), params).fetchall()
    tag = f"{condition}|{embedder}|{reranker}"
    safe = "".join(
        ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{corpus}_{condition}_{embedder}_{reranker}_{level}"
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    run_file, qrels_file = out / f"{safe}.run", out / f"{safe}.qrels"
    with open(run_file, "w", encoding="utf-8") as handle:
        for query_id, docno, rank, score in run:
            handle.write(f"{query_id} Q0 {docno} {rank} {score!r} {tag}\n")
    with open(qrels_file, "w", encoding="utf-8") as handle:
        for query_id, docno, relevance in qrels:
            handle.write(f"{query_id} 0 {docno} {relevance}\n")
    graded_file, graded = None, []
    if level == "chunk":
        scorable = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'int_eval_queries'"
        ).fetchone()[0]
        graded = con.execute(
            _GRADED_SQL.format(
                scorable="JOIN int_eval_queries e USING (query_id)" if scorable else "",
                ok="AND e.status = 'ok'" if scorable else "",
            ),
            params,
        ).fetchall()
        graded_file = out / f"{safe}.cov.qrels"
        with open(graded_file, "w", encoding="utf-8") as handle:
            for query_id, docno, gain in graded:
                handle.write(f"{query_id} 0 {docno} {round(gain * GAIN_SCALE)}\n")
    return TrecExport(run_file, qrels_file, len({r[0] for r in run}), len(run), len(qrels), graded_file, len(graded))


#: per (query, chunk of the condition's index): gain = mean over the query's spans of the covered share
_GRADED_SQL = """
    WITH q AS (SELECT DISTINCT r.query_id FROM runs r {scorable}
               WHERE r.corpus = $corpus AND r.condition = $condition AND r.embedder = $embedder
                 AND r.reranker = $reranker {ok}),
    spans AS (SELECT e.query_id, e.doc_id, e.char_start, e.char_end, count(*) OVER (PARTITION BY e.query_id) AS m
              FROM evidence e JOIN q USING (query_id)),
    idx AS (SELECT DISTINCT chunk_id, doc_id, char_start, char_end FROM int_condition_texts
            WHERE corpus = $corpus AND condition = $condition)
    SELECT s.query_id, i.chunk_id,
           sum((least(i.char_end, s.char_end) - greatest(i.char_start, s.char_start))::double
               / (s.char_end - s.char_start) / s.m) AS gain
    FROM spans s JOIN idx i ON i.doc_id = s.doc_id
     AND least(i.char_end, s.char_end) > greatest(i.char_start, s.char_start)
    GROUP BY ALL ORDER BY s.query_id, i.chunk_id"""


@dataclass(frozen=True)
class CorpusExport:
    directory: Path
    corpus: str
    condition: str
    n_texts: int
    n_queries: int
    n_qrels: int


def export_corpus(
    con: duckdb.DuckDBPyConnection, condition: str, out_dir: str | Path, *, corpus: str | None = None
) -> CorpusExport:
    """Write the condition's exact texts, the corpus's queries and chunk qrels as a BEIR directory
    (module docstring). ``corpus`` may be omitted when the condition holds one corpus."""
    import json

    if not con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'int_condition_texts'"
    ).fetchone()[0]:
        raise ExportError("the warehouse has no int_condition_texts model: run `ragwh run` (or dbt build) first")
    corpora = [
        c
        for (c,) in con.execute(
            "SELECT DISTINCT corpus FROM int_condition_texts WHERE condition = ? "
            "AND (? IS NULL OR corpus = ?) ORDER BY 1",
            [condition, corpus, corpus],
        ).fetchall()
    ]
    if not corpora:
        held = con.execute("SELECT DISTINCT corpus || ' ' || condition FROM int_condition_texts ORDER BY 1").fetchall()
        raise ExportError(
            f"no texts for condition={condition} corpus={corpus or '*'}; the warehouse holds (corpus "
            f"condition): {'; '.join(r[0] for r in held[:30]) or 'none'}"
        )
    if len(corpora) > 1:
        raise ExportError(f"condition {condition} has texts in several corpora {corpora}: pass --corpus")
    corpus = corpora[0]
    texts = con.execute(
        """SELECT chunk_id, doc_id, chunkset, char_start, char_end, is_fallback, text_hash, text
                           FROM int_condition_texts WHERE corpus = ? AND condition = ? ORDER BY chunk_id""",
        [corpus, condition],
    ).fetchall()
    unsafe = [t[0] for t in texts if any(ch.isspace() for ch in t[0])]
    if unsafe:
        raise ExportError(f"chunk id {unsafe[0]!r} holds whitespace: TREC runs could not name it")
    queries = con.execute("SELECT query_id, text FROM queries WHERE corpus = ? ORDER BY query_id", [corpus]).fetchall()
    has_qrels = (
        con.execute("SELECT count(*) FROM qrels q JOIN queries USING (query_id) WHERE corpus = ?", [corpus]).fetchone()[
            0
        ]
        > 0
    )
    params = {"corpus": corpus, "condition": condition}
    qrels = con.execute(_CORPUS_QRELS_DOC if has_qrels else _CORPUS_QRELS_SPAN, params).fetchall()
    out = Path(out_dir)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as handle:
        for chunk_id, doc_id, chunkset, start, end, fallback, text_hash, text in texts:
            handle.write(
                json.dumps(
                    {
                        "_id": chunk_id,
                        "title": "",
                        "text": text,
                        "metadata": {
                            "doc_id": doc_id,
                            "chunkset": chunkset,
                            "char_start": start,
                            "char_end": end,
                            "is_fallback": bool(fallback),
                            "text_hash": text_hash,
                        },
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    with open(out / "queries.jsonl", "w", encoding="utf-8") as handle:
        for query_id, text in queries:
            handle.write(json.dumps({"_id": query_id, "text": text}, ensure_ascii=False) + "\n")
    with open(out / "qrels" / "test.tsv", "w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for query_id, chunk_id, relevance in qrels:
            handle.write(f"{query_id}\t{chunk_id}\t{relevance}\n")
    manifest = {
        "corpus": corpus,
        "condition": condition,
        "texts": len(texts),
        "queries": len(queries),
        "qrels": len(qrels),
        "text": "prefix + content, exactly as the condition embeds it (int_condition_texts.text)",
        "qrels_rule": (
            "each chunk inherits its document's judgment"
            if has_qrels
            else "chunk relevant iff it covers >= 50% of a gold span or lies >= 80% inside one"
        ),
        "import": f"ragwh import run RUN_FILE --name NAME --condition {condition} --corpus {corpus}",
    }
    (out / "export.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return CorpusExport(out, corpus, condition, len(texts), len(queries), len(qrels))


_CORPUS_QRELS_SPAN = """
    SELECT e.query_id, i.chunk_id, 1 AS relevance
    FROM evidence e JOIN queries q ON q.query_id = e.query_id AND q.corpus = $corpus
    JOIN int_condition_texts i ON i.corpus = $corpus AND i.condition = $condition AND i.doc_id = e.doc_id
    WHERE greatest(0, least(i.char_end, e.char_end) - greatest(i.char_start, e.char_start)) >= 0.5 * (e.char_end - e.char_start)
       OR greatest(0, least(i.char_end, e.char_end) - greatest(i.char_start, e.char_start)) >= 0.8 * (i.char_end - i.char_start)
    GROUP BY ALL ORDER BY 1, 2"""
_CORPUS_QRELS_DOC = """
    SELECT r.query_id, i.chunk_id, r.relevance
    FROM qrels r JOIN queries q ON q.query_id = r.query_id AND q.corpus = $corpus
    JOIN int_condition_texts i ON i.corpus = $corpus AND i.condition = $condition AND i.doc_id = r.doc_id
    WHERE r.relevance > 0 ORDER BY 1, 2"""
