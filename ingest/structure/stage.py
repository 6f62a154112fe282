"""The induction stage: structure ``induced:<inducer>`` for every document of the structured corpora.

``induce(con, inducer, corpus=None, backend=None)`` runs the inducer (``texttiling`` or ``llm``) on
every document of ``corpus`` (default: every corpus that has gold structure), and in ONE
transaction per corpus replaces that corpus's ``sections`` rows of the structure, its
``induction_log`` rows (status usable / repaired / failed and why; for the LLM inducer also the
``outcome`` legal_as_returned / legal_after_correction / repaired / failed, whether the document's
requests were ``structured`` and whether its first answer was ``schema_valid``), its ``quarantine``
rows of stage ``induce:<inducer>`` (one per failed document, with the violations) and its ``funnel``
rows of the same stage (``input``, ``usable``, ``self_corrected``, ``repaired``, ``failed``, ``kept``;
for the LLM inducer also ``legal_as_returned``, ``structured`` (documents whose requests carried the
schema), ``schema_valid`` (first answers that satisfy it), ``truncated`` (documents shown only in part:
longer than the model's context), ``cut_answers`` (answers cut at max_tokens) and
``correction_skipped``). Failed documents get no induced sections; nothing is loaded half-verified.

With ``chunk=True`` the corpus is re-chunked afterwards (:func:`ingest.chunking.stage.chunk_corpus`) and
the report includes the span identity. The report (:func:`induction_report`) per corpus:
documents, usable (= kept), self-corrected, repaired, failed, mean sections per kept document under
the induced and the gold structure (same documents), mean level-1 sections likewise, and the span
identity: the share of ``structural:induced:<inducer>`` chunks whose ``(doc_id, char_start,
char_end)`` equals that of some ``structural:gold`` chunk (equal offsets in the same document =
byte-identical text), pooled over the corpus's documents that have both chunksets.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import duckdb
import pyarrow as pa

from ingest.corpora.docs import StoredDoc, read_docs, structured_corpora
from ingest.errors import IngestError
from ingest.structure.llm_inducer import InductionResult, induce_with_llm
from ingest.structure.texttiling import TextTilingParams
from ingest.structure.tiling_inducer import induce_with_texttiling
from warehouse.db import replace_where, transaction

INDUCERS = ("texttiling", "llm")


def induce(
    con: duckdb.DuckDBPyConnection,
    inducer: str,
    corpus: str | None = None,
    backend: Any = None,
    *,
    params: TextTilingParams = TextTilingParams(),
    embedder: str | None = None,
    chunk: bool = False,
    show_progress: bool = True,
    precision: str | None = "auto",
    max_tokens: int = 4096,
    structured: bool | None = None,
) -> dict:
    """Induce, verify and load structure ``induced:<inducer>``; return the report (module doc).
    TextTiling's paragraph vectors come from ``embedder`` computing in ``precision``
    (:mod:`ingest.retrieval.precision`).

    ``backend`` (llm only): an :class:`ingest.llm.LLMCache`, a bare :class:`ingest.llm.LLMBackend`
    (put behind the cache), or None for the configured one (``RAGWH_LLM_*``); ``max_tokens`` caps each
    structure answer and ``structured`` is the ``llm.structured`` setting (llm only; None: structured
    output where the backend has it)."""
    if inducer not in INDUCERS:
        raise ValueError(f"unknown inducer {inducer!r}: use one of {', '.join(INDUCERS)}")
    corpora = [corpus] if corpus is not None else structured_corpora(con)
    if not corpora:
        raise IngestError(
            "warehouse",
            None,
            "no corpus with gold structure is loaded",
            "load QASPER or Wikipedia first (ragwh ingest qasper|wikipedia ...)",
        )
    structure = f"induced:{inducer}"
    t0 = time.perf_counter()
    llm = None
    if inducer == "llm":
        from ingest.llm import as_llm

        llm = as_llm(con, backend)
    report: dict[str, Any] = {"inducer": inducer, "structure": structure, "corpora": {}}
    for name in corpora:
        docs = read_docs(con, name)
        empty = [d for d in docs if not d.paragraphs]
        todo = [d for d in docs if d.paragraphs]
        if inducer == "llm":
            results = induce_with_llm(todo, llm, max_tokens=max_tokens, structured=structured)
            extra = {}
        else:
            results, extra = induce_with_texttiling(
                con, todo, params, embedder, show_progress=show_progress, precision=precision
            )
            extra = {"embedding": extra, "params": dataclasses.asdict(params)}
        results += [InductionResult(d.doc_id, "failed", [], "document has no paragraphs") for d in empty]
        _load(con, structure, name, docs, results)
        report["corpora"][name] = extra
    if llm is not None:
        report["llm"] = {
            "model": llm.model,
            "backend": llm.backend_name,
            "calls": llm.calls,
            "cache_hits": llm.hits,
            "cut": llm.cut,
            "empty": llm.empty,
        }
    if chunk:
        from ingest.chunking.stage import chunk_corpus

        for name in corpora:
            chunk_corpus(con, name, inducer, show_progress=show_progress)
    for name in corpora:
        report["corpora"][name].update(induction_report(con, inducer, name, with_spans=chunk))
    report["seconds"] = time.perf_counter() - t0
    return report


def _load(
    con: duckdb.DuckDBPyConnection, structure: str, corpus: str, docs: list[StoredDoc], results: list[InductionResult]
) -> None:
    results = sorted(results, key=lambda r: r.doc_id)
    source = {d.doc_id: d.source_file for d in docs}
    sections = [(r.doc_id, row) for r in results for row in r.rows]
    section_table = pa.table(
        {
            "structure": [structure] * len(sections),
            "doc_id": [d for d, _ in sections],
            "section_idx": pa.array([s.section_idx for _, s in sections], pa.int32()),
            "parent_idx": pa.array([s.parent_idx for _, s in sections], pa.int32()),
            "level": pa.array([s.level for _, s in sections], pa.int32()),
            "title": [s.title for _, s in sections],
            "para_start": pa.array([s.para_start for _, s in sections], pa.int32()),
            "para_end": pa.array([s.para_end for _, s in sections], pa.int32()),
            "char_start": pa.array([s.char_start for _, s in sections], pa.int32()),
            "char_end": pa.array([s.char_end for _, s in sections], pa.int32()),
        }
    )
    by_llm = structure == "induced:llm"
    log = pa.table(
        {
            "structure": [structure] * len(results),
            "doc_id": [r.doc_id for r in results],
            "status": [r.status for r in results],
            "n_sections": pa.array([len(r.rows) if r.rows else None for r in results], pa.int32()),
            "detail": [r.detail for r in results],
            "outcome": pa.array([r.outcome if by_llm else None for r in results], pa.string()),
            "structured": pa.array([r.structured for r in results], pa.bool_()),
            "schema_valid": pa.array([r.schema_valid for r in results], pa.bool_()),
        }
    )
    failed = [r for r in results if r.status == "failed"]
    stage = f"induce:{structure.removeprefix('induced:')}"
    quarantine = pa.table(
        {
            "corpus": [corpus] * len(failed),
            "source_file": [source[r.doc_id] for r in failed],
            "record_id": [r.doc_id for r in failed],
            "stage": [stage] * len(failed),
            "reason": [r.detail for r in failed],
        }
    )
    counts = {
        "input": len(results),
        "usable": sum(r.status == "usable" for r in results),
        "self_corrected": sum(r.self_corrected for r in results),
        "repaired": sum(r.status == "repaired" for r in results),
        "failed": len(failed),
        "kept": sum(r.status != "failed" for r in results),
    }
    if by_llm:
        counts.update(
            {
                "legal_as_returned": sum(r.outcome == "legal_as_returned" for r in results),
                "structured": sum(r.structured is True for r in results),
                "schema_valid": sum(r.schema_valid is True for r in results),
                "truncated": sum(r.truncated_to is not None for r in results),
                "cut_answers": sum(r.cut_answers for r in results),
                "correction_skipped": sum(r.correction_skipped for r in results),
            }
        )
    funnel = pa.table(
        {
            "corpus": [corpus] * len(counts),
            "stage": [stage] * len(counts),
            "reason": list(counts),
            "n": pa.array(list(counts.values()), pa.int64()),
        }
    )
    scope = "doc_id IN (SELECT doc_id FROM documents WHERE corpus = ?)"
    with transaction(con):
        replace_where(con, "sections", f"structure = ? AND {scope}", [structure, corpus], section_table)
        replace_where(con, "induction_log", f"structure = ? AND {scope}", [structure, corpus], log)
        replace_where(con, "quarantine", "corpus = ? AND stage = ?", [corpus, stage], quarantine)
        replace_where(con, "funnel", "corpus = ? AND stage = ?", [corpus, stage], funnel)


def induction_report(con: duckdb.DuckDBPyConnection, inducer: str, corpus: str, *, with_spans: bool = True) -> dict:
    """Statistics of structure ``induced:<inducer>`` on ``corpus`` (module doc); ``span_identity``
    is computed from the ``chunks`` table when ``with_spans`` (None when no document has both chunksets)."""
    structure = f"induced:{inducer}"
    counts = dict(
        con.execute(
            "SELECT reason, n FROM funnel WHERE corpus = ? AND stage = ?", [corpus, f"induce:{inducer}"]
        ).fetchall()
    )
    sec = con.execute(
        """
        WITH kept AS (SELECT doc_id FROM induction_log l JOIN documents d USING (doc_id)
                      WHERE l.structure = $s AND d.corpus = $c AND l.status <> 'failed'),
        per_doc AS (
            SELECT k.doc_id,
                   count(*) FILTER (WHERE s.structure = $s) AS n_ind,
                   count(*) FILTER (WHERE s.structure = $s AND s.level = 1) AS n_ind_top,
                   count(*) FILTER (WHERE s.structure = 'gold') AS n_gold,
                   count(*) FILTER (WHERE s.structure = 'gold' AND s.level = 1) AS n_gold_top
            FROM kept k JOIN sections s ON s.doc_id = k.doc_id AND s.structure IN ($s, 'gold')
            GROUP BY k.doc_id)
        SELECT count(*), avg(n_ind), avg(n_gold), avg(n_ind_top), avg(n_gold_top),
               count(*) FILTER (WHERE n_gold > 0) FROM per_doc
        """,
        {"s": structure, "c": corpus},
    ).fetchall()[0]
    out = {
        "documents": counts.get("input", 0),
        "usable": counts.get("kept", 0),
        "usable_first_try": counts.get("usable", 0) - counts.get("self_corrected", 0),
        "self_corrected": counts.get("self_corrected", 0),
        "repaired": counts.get("repaired", 0),
        "failed": counts.get("failed", 0),
        "mean_sections_induced": sec[1],
        "mean_sections_gold": sec[2],
        "mean_top_level_induced": sec[3],
        "mean_top_level_gold": sec[4],
        "documents_with_gold": sec[5],
    }
    for key in ("structured", "schema_valid", "truncated", "cut_answers", "correction_skipped"):
        if key in counts:
            out[key] = counts[key]
    if with_spans:
        matched, total, n_docs = con.execute(
            """
            WITH ind AS (SELECT c.doc_id, c.char_start, c.char_end FROM chunks c JOIN documents d USING (doc_id)
                         WHERE c.chunkset = $ind AND d.corpus = $c),
            gold AS (SELECT doc_id, char_start, char_end FROM chunks WHERE chunkset = 'structural:gold'),
            both_docs AS (SELECT DISTINCT doc_id FROM ind SEMI JOIN gold USING (doc_id))
            SELECT count(*) FILTER (WHERE g.doc_id IS NOT NULL), count(*), (SELECT count(*) FROM both_docs)
            FROM (SELECT * FROM ind WHERE doc_id IN (SELECT doc_id FROM both_docs)) i
            LEFT JOIN (SELECT DISTINCT * FROM gold) g USING (doc_id, char_start, char_end)
            """,
            {"ind": f"structural:{structure}", "c": corpus},
        ).fetchall()[0]
        out["span_identity"] = (matched / total) if total else None
        out["span_identity_counts"] = {"identical": matched, "induced_chunks": total, "documents": n_docs}
    return out
