"""QASPER into the warehouse: papers -> documents, paragraphs, gold sections; questions -> queries,
evidence; every filter -> funnel; bad records -> quarantine.

:func:`build_qasper` is pure (files in, Arrow tables out); :func:`load_qasper` writes them in ONE
transaction, replacing this corpus's rows, so a reload of the same files leaves identical tables
and a failure leaves the warehouse as it was. The corpus's rows are *replaced*: after a load the
corpus holds exactly the papers of the files given.

Funnel stages (``funnel(corpus, stage, reason, n)``; every stage has ``input`` and ``kept`` rows and
``input = kept + the other reasons`` unless marked *repairs*):

* ``records`` -- paper records read; ``duplicate_identical`` (same paper in several files/layouts,
  loaded once), ``conflicting_duplicate`` (records of an id whose copies differ: none loaded,
  quarantined per file).
* ``papers`` -- merged papers; ``beyond_limit`` (``limit``), ``empty_title``, ``no_sections``,
  ``empty_text``, ``verification_failed`` (quarantined with the reason).
* ``paragraphs`` -- source paragraphs of loaded papers (abstract included); ``empty`` skipped.
* ``section_names`` (*repairs*: nothing dropped, ``kept = input``) -- ``full_text`` entries of loaded
  papers; ``null_section_name``, ``empty_section_name``, ``depth_clamped`` (see ingest.corpora.qasper.text).
* ``headings`` -- headings of loaded papers (Abstract, entries, containers); ``no_paragraphs``
  (whole subtree empty, dropped by ingest.structure.segments.build_sections); ``kept`` = sections rows.
* ``questions`` -- questions of papers within the limit; ``paper_quarantined``,
  ``duplicate_question_id`` (an id already read for an earlier paper; quarantined), then the filters
  of ingest.corpora.qasper.questions.
* ``evidence`` -- evidence strings of questions that reached matching; ``duplicate_string``,
  ``empty``, ``table_figure``, ``unmatched`` (quarantined), ``duplicate_span``; ``kept`` = evidence rows.
* ``evidence_match`` (*shares*, no ``input``) -- kept spans per method: ``exact``, ``fuzzy``, ``section``.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb
import pyarrow as pa

from ingest.corpora.qasper.questions import QUESTION_REASONS, EvidenceMatcher, judge_question
from ingest.corpora.qasper.records import SourcedPaper, merge_papers
from ingest.corpora.qasper.text import flatten_paper
from ingest.errors import no_documents, no_queries
from ingest.structure.segments import build_sections, verify_sections
from warehouse.db import replace_structured_corpus, replace_where, transaction
from warehouse.schema import arrow_schema

STRUCTURE = "gold"
MATCH_METHODS = ("exact", "fuzzy", "section")
STAGES: dict[str, tuple[str, ...]] = {
    "records": ("input", "duplicate_identical", "conflicting_duplicate", "kept"),
    "papers": ("input", "beyond_limit", "empty_title", "no_sections", "empty_text", "verification_failed", "kept"),
    "paragraphs": ("input", "empty", "kept"),
    "section_names": ("input", "null_section_name", "empty_section_name", "depth_clamped", "kept"),
    "headings": ("input", "no_paragraphs", "kept"),
    "questions": ("input", "paper_quarantined", "duplicate_question_id", *QUESTION_REASONS, "kept"),
    "evidence": ("input", "duplicate_string", "empty", "table_figure", "unmatched", "duplicate_span", "kept"),
    "evidence_match": MATCH_METHODS,
}
QUARANTINE_STAGES = ("records", "papers", "questions", "evidence")


@dataclass
class _Columns:
    """Column-wise rows of every table this job loads."""

    documents: dict[str, list] = field(
        default_factory=lambda: _cols("doc_id corpus title text topic_bucket split source_file")
    )
    paragraphs: dict[str, list] = field(default_factory=lambda: _cols("doc_id para_idx char_start char_end"))
    sections: dict[str, list] = field(
        default_factory=lambda: _cols(
            "structure doc_id section_idx parent_idx level title para_start para_end char_start char_end"
        )
    )
    queries: dict[str, list] = field(default_factory=lambda: _cols("query_id doc_id corpus text query_type"))
    evidence: dict[str, list] = field(
        default_factory=lambda: _cols("query_id span_idx doc_id char_start char_end match_method")
    )
    quarantine: dict[str, list] = field(default_factory=lambda: _cols("corpus source_file record_id stage reason"))


_SCHEMAS: dict[str, pa.Schema] = {
    name: arrow_schema(name)
    for name in ("documents", "paragraphs", "sections", "queries", "evidence", "quarantine", "funnel")
}


@dataclass
class QasperTables:
    """Everything one load writes: Arrow tables by warehouse table name, and the funnel counts."""

    tables: dict[str, pa.Table]
    funnel: dict[str, Counter]


def build_qasper(
    files: list[Path],
    corpus: str = "qasper",
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> QasperTables:
    """Read, merge, flatten, verify and judge: the rows of every table, nothing written.

    ``limit`` keeps the first N merged papers in sorted paper-id order. ``progress(done, total)`` is
    called after each paper.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    merged, conflicts, record_counts = merge_papers(list(files))
    funnel: dict[str, Counter] = {stage: Counter() for stage in STAGES}
    funnel["records"].update(record_counts)
    out = _Columns()
    for conflict in conflicts:
        for src in conflict.source_files:
            _append(
                out.quarantine,
                corpus=corpus,
                source_file=src,
                record_id=conflict.paper_id,
                stage="records",
                reason="conflicting_duplicate: the records of this paper id differ between "
                + ", ".join(conflict.source_files)
                + " (load one version)",
            )
    selected = merged if limit is None else merged[:limit]
    funnel["papers"].update(input=len(merged), beyond_limit=len(merged) - len(selected))
    seen_questions: set[str] = set()
    for done, sp in enumerate(selected, start=1):
        _add_paper(sp, corpus, out, funnel, seen_questions)
        if progress is not None:
            progress(done, len(selected))
    funnel["papers"]["kept"] = len(out.documents["doc_id"])
    funnel["paragraphs"]["kept"] = funnel["paragraphs"]["input"] - funnel["paragraphs"]["empty"]
    funnel["section_names"]["kept"] = funnel["section_names"]["input"]
    funnel["headings"]["kept"] = len(out.sections["doc_id"])
    funnel["questions"]["kept"] = len(out.queries["query_id"])
    tables = {
        name: pa.Table.from_pydict(getattr(out, name), schema=_SCHEMAS[name])
        for name in ("documents", "paragraphs", "sections", "queries", "evidence", "quarantine")
    }
    rows = [
        (corpus, stage, reason, int(funnel[stage][reason])) for stage, reasons in STAGES.items() for reason in reasons
    ]
    tables["funnel"] = pa.Table.from_pylist(
        [dict(zip(("corpus", "stage", "reason", "n"), r)) for r in rows], schema=_SCHEMAS["funnel"]
    )
    return QasperTables(tables, funnel)


def load_qasper(
    con: duckdb.DuckDBPyConnection,
    files: list[Path],
    corpus: str = "qasper",
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Build the corpus from ``files`` (see :func:`build_qasper`) and replace its rows in the warehouse
    in one transaction (refused with :func:`ingest.errors.no_documents` when no paper is left).
    Returns a summary: counts per table, the funnel, match-method shares (share = n_method /
    n_spans), quarantine counts per stage, and ``seconds`` (wall clock)."""
    started = time.perf_counter()
    built = build_qasper(files, corpus, limit, progress)
    t = built.tables
    if t["documents"].num_rows == 0:
        raise no_documents([str(f) for f in files], corpus, {s: dict(built.funnel[s]) for s in ("records", "papers")})
    if t["queries"].num_rows == 0:
        raise no_queries([str(f) for f in files], corpus, {s: dict(built.funnel[s]) for s in ("papers", "questions")})
    with transaction(con):
        replace_where(con, "evidence", "starts_with(query_id, ?)", [corpus + "/"], t["evidence"])
        replace_where(con, "queries", "corpus = ?", [corpus], t["queries"])
        replace_structured_corpus(con, corpus, t, STAGES, QUARANTINE_STAGES)
    return summarize(built, corpus, files, time.perf_counter() - started)


def summarize(built: QasperTables, corpus: str, files: list[Path], seconds: float) -> dict:
    """The summary :func:`load_qasper` returns (and ``ragwh ingest qasper`` prints)."""
    f = built.funnel
    n_spans = sum(f["evidence_match"][m] for m in MATCH_METHODS)
    return {
        "corpus": corpus,
        "files": [str(p) for p in files],
        "papers": built.tables["documents"].num_rows,
        "sections": built.tables["sections"].num_rows,
        "paragraphs": built.tables["paragraphs"].num_rows,
        "queries": built.tables["queries"].num_rows,
        "evidence_spans": n_spans,
        "funnel": {stage: {r: int(f[stage][r]) for r in reasons} for stage, reasons in STAGES.items()},
        "match_shares": {m: (f["evidence_match"][m] / n_spans if n_spans else 0.0) for m in MATCH_METHODS},
        "quarantine": dict(sorted(Counter(built.tables["quarantine"].column("stage").to_pylist()).items())),
        "seconds": seconds,
    }


def _add_paper(
    sp: SourcedPaper, corpus: str, out: _Columns, funnel: dict[str, Counter], seen_questions: set[str]
) -> None:
    paper = sp.paper
    doc_id = f"{corpus}/{paper.paper_id}"
    source = "; ".join(sp.source_files)
    flat = flatten_paper(paper)
    rows, dropped = build_sections(flat.headings, flat.para_offsets)
    if not flat.title:
        reason = "empty_title"
    elif not paper.sections:
        reason = "no_sections"
    elif not flat.para_offsets:
        reason = "empty_text"
    else:
        violations = verify_sections(rows, flat.para_offsets)
        reason = "verification_failed: " + "; ".join(violations) if violations else None
    if reason is not None:
        funnel["papers"][reason.split(":")[0]] += 1
        _append(
            out.quarantine, corpus=corpus, source_file=source, record_id=paper.paper_id, stage="papers", reason=reason
        )
        funnel["questions"].update(input=len(paper.questions), paper_quarantined=len(paper.questions))
        return

    c = flat.counts
    funnel["paragraphs"].update(input=c.paragraphs_input, empty=c.empty_paragraphs)
    funnel["section_names"].update(
        input=c.entries,
        null_section_name=c.null_section_name,
        empty_section_name=c.empty_section_name,
        depth_clamped=c.depth_clamped,
    )
    funnel["headings"].update(input=len(flat.headings), no_paragraphs=len(dropped))
    _append(
        out.documents,
        doc_id=doc_id,
        corpus=corpus,
        title=flat.title,
        text=flat.text,
        topic_bucket=None,
        split=sp.split,
        source_file=source,
    )
    for i, (s, e) in enumerate(flat.para_offsets):
        _append(out.paragraphs, doc_id=doc_id, para_idx=i, char_start=s, char_end=e)
    for r in rows:
        _append(
            out.sections,
            structure=STRUCTURE,
            doc_id=doc_id,
            section_idx=r.section_idx,
            parent_idx=r.parent_idx,
            level=r.level,
            title=r.title,
            para_start=r.para_start,
            para_end=r.para_end,
            char_start=r.char_start,
            char_end=r.char_end,
        )

    dropped_set = set(dropped)
    row_paths = [path for i, path in enumerate(flat.paths) if i not in dropped_set]
    matcher = EvidenceMatcher(flat.text, flat.para_offsets, rows, row_paths)
    for q in paper.questions:
        funnel["questions"]["input"] += 1
        query_id = f"{corpus}/{q.question_id}"
        if q.question_id in seen_questions:
            funnel["questions"]["duplicate_question_id"] += 1
            _append(
                out.quarantine,
                corpus=corpus,
                source_file=source,
                record_id=q.question_id,
                stage="questions",
                reason=f"duplicate_question_id: already read for an earlier paper (this one: {paper.paper_id})",
            )
            continue
        seen_questions.add(q.question_id)
        outcome = judge_question(q, matcher)
        if outcome.evidence_counts is not None:
            funnel["evidence"].update(outcome.evidence_counts)
        for e in outcome.unmatched:
            _append(
                out.quarantine,
                corpus=corpus,
                source_file=source,
                record_id=q.question_id,
                stage="evidence",
                reason=f"evidence matches no paragraph or section heading of paper {paper.paper_id}: {e[:120]!r}",
            )
        if outcome.reason is not None:
            funnel["questions"][outcome.reason] += 1
            continue
        _append(
            out.queries,
            query_id=query_id,
            doc_id=doc_id,
            corpus=corpus,
            text=q.text.strip(),
            query_type=outcome.query_type,
        )
        for k, span in enumerate(outcome.spans):
            funnel["evidence_match"][span.match_method] += 1
            _append(
                out.evidence,
                query_id=query_id,
                span_idx=k,
                doc_id=doc_id,
                char_start=span.char_start,
                char_end=span.char_end,
                match_method=span.match_method,
            )


def _cols(names: str) -> dict[str, list]:
    return {n: [] for n in names.split()}


def _append(columns: dict[str, list], **values) -> None:
    for name, col in columns.items():
        col.append(values[name])
