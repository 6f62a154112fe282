"""Corpora without structure (BEIR, HotpotQA, EnterpriseRAG-Bench, AmbigNQ): one-paragraph documents,
queries, document-level qrels and (where the source has them) gold answers (``query_answers``).

Every document follows ``docs/design.md``: ``text = title + "\\n\\n" + body`` with ``body`` its single
paragraph (``paragraphs`` row 0: ``[len(title) + 2, len(text))``), no sections. The chunking stage
then gives each document its one ``doc`` chunk (the DOC condition). :func:`write_flat_corpus`
replaces the corpus's rows of every table it writes in ONE transaction.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import duckdb
import pyarrow as pa

from ingest.errors import no_documents, no_queries
from warehouse.db import replace_where, transaction
from warehouse.schema import arrow_schema

TITLE_SEPARATOR = "\n\n"


@dataclasses.dataclass
class FlatCorpus:
    """Rows being built for one corpus from the files or directories ``sources``; ``funnel[stage][reason] = n``."""

    corpus: str
    sources: tuple[str, ...] = ()
    documents: list[dict] = dataclasses.field(default_factory=list)
    paragraphs: list[dict] = dataclasses.field(default_factory=list)
    queries: list[dict] = dataclasses.field(default_factory=list)
    qrels: list[dict] = dataclasses.field(default_factory=list)
    answers: list[dict] = dataclasses.field(default_factory=list)
    labels: list[dict] = dataclasses.field(default_factory=list)
    quarantine: list[dict] = dataclasses.field(default_factory=list)
    meta: dict[str, str] = dataclasses.field(default_factory=dict)
    funnel: dict[str, Counter] = dataclasses.field(default_factory=dict)

    def count(self, stage: str, reason: str, n: int = 1) -> None:
        self.funnel.setdefault(stage, Counter())[reason] += n

    def add_document(self, source_id: str, title: str, body: str, source_file: str, split: str | None) -> str:
        """Append a document (``body`` already stripped and non-empty); returns its doc_id."""
        doc_id = f"{self.corpus}/{source_id}"
        text = title + TITLE_SEPARATOR + body
        self.documents.append(
            {
                "doc_id": doc_id,
                "corpus": self.corpus,
                "title": title,
                "text": text,
                "topic_bucket": None,
                "split": split,
                "source_file": source_file,
            }
        )
        self.paragraphs.append(
            {"doc_id": doc_id, "para_idx": 0, "char_start": len(title) + len(TITLE_SEPARATOR), "char_end": len(text)}
        )
        return doc_id

    def add_query(self, source_id: str, text: str, query_type: str) -> str:
        query_id = f"{self.corpus}/{source_id}"
        self.queries.append(
            {"query_id": query_id, "doc_id": None, "corpus": self.corpus, "text": text, "query_type": query_type}
        )
        return query_id

    def add_qrel(self, query_id: str, doc_id: str, relevance: int) -> None:
        self.qrels.append({"query_id": query_id, "doc_id": doc_id, "relevance": relevance})

    def add_answers(self, query_id: str, answers: list[str]) -> None:
        """Gold answer strings of a query (aliases in order, ``answer_idx`` 0-based)."""
        self.answers.extend({"query_id": query_id, "answer_idx": i, "answer": a} for i, a in enumerate(answers))

    def add_label(self, query_id: str, label: str, value: str, source_file: str) -> None:
        """A label the loader knows about a query (table labels, origin 'loader'; the name is a row of
        seeds/slice_labels.csv): contrasts are sliced by it (marts contrast_slices, rewrite_slices)."""
        self.labels.append(
            {
                "entity": "queries",
                "id": query_id,
                "label": label,
                "value": value,
                "origin": "loader",
                "source_file": source_file,
            }
        )

    def quarantine_record(self, source_file: str, record_id: str, stage: str, reason: str) -> None:
        self.quarantine.append(
            {
                "corpus": self.corpus,
                "source_file": source_file,
                "record_id": record_id,
                "stage": stage,
                "reason": reason,
            }
        )


_SCHEMAS: dict[str, pa.Schema] = {
    name: arrow_schema(name)
    for name in ("documents", "paragraphs", "queries", "qrels", "quarantine", "query_answers", "labels")
}


def _table(name: str, rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=_SCHEMAS[name])


def write_flat_corpus(con: duckdb.DuckDBPyConnection, built: FlatCorpus) -> dict:
    """Replace the corpus's documents, paragraphs, queries, qrels, gold answers, evidence (none), the labels
    its loader knows (origin 'loader'), its
    funnel and quarantine stages and meta keys in one transaction; return the row counts and the funnel.
    Refused (:func:`ingest.errors.no_documents` / :func:`ingest.errors.no_queries`, nothing written) when
    no document or no query is left."""
    corpus, prefix = built.corpus, built.corpus + "/"
    stages = sorted(built.funnel)
    if not built.documents:
        raise no_documents(list(built.sources), corpus, {s: dict(built.funnel[s]) for s in stages})
    if not built.queries:
        raise no_queries(list(built.sources), corpus, {s: dict(built.funnel[s]) for s in stages})
    funnel = pa.table(
        {
            "corpus": [corpus] * sum(len(built.funnel[s]) for s in stages),
            "stage": [s for s in stages for _ in built.funnel[s]],
            "reason": [r for s in stages for r in built.funnel[s]],
            "n": pa.array([built.funnel[s][r] for s in stages for r in built.funnel[s]], pa.int64()),
        }
    )
    meta = pa.table({"corpus": [corpus] * len(built.meta), "key": list(built.meta), "value": list(built.meta.values())})
    stage_params = ", ".join("?" for _ in stages) or "NULL"
    with transaction(con):
        replace_where(con, "paragraphs", "starts_with(doc_id, ?)", [prefix], _table("paragraphs", built.paragraphs))
        replace_where(con, "sections", "starts_with(doc_id, ?)", [prefix], None)
        replace_where(con, "evidence", "starts_with(query_id, ?)", [prefix], None)
        replace_where(con, "qrels", "starts_with(query_id, ?)", [prefix], _table("qrels", built.qrels))
        replace_where(
            con, "query_answers", "starts_with(query_id, ?)", [prefix], _table("query_answers", built.answers)
        )
        replace_where(
            con,
            "labels",
            "origin = 'loader' AND entity = 'queries' AND starts_with(id, ?)",
            [prefix],
            _table("labels", built.labels),
        )
        replace_where(con, "queries", "corpus = ?", [corpus], _table("queries", built.queries))
        replace_where(con, "documents", "corpus = ?", [corpus], _table("documents", built.documents))
        replace_where(con, "funnel", f"corpus = ? AND stage IN ({stage_params})", [corpus, *stages], funnel)
        replace_where(
            con,
            "quarantine",
            f"corpus = ? AND stage IN ({stage_params})",
            [corpus, *stages],
            _table("quarantine", built.quarantine),
        )
        replace_where(
            con, "corpus_meta", "corpus = ? AND key IN (SELECT unnest(?::VARCHAR[]))", [corpus, list(built.meta)], meta
        )
    return {
        "corpus": corpus,
        "documents": len(built.documents),
        "queries": len(built.queries),
        "qrels": len(built.qrels),
        "answers": len(built.answers),
        "quarantined": len(built.quarantine),
        "funnel": {s: dict(sorted(built.funnel[s].items())) for s in stages},
    }
