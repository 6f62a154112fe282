"""``ragwh ingest enterprise-rag QUESTIONS --documents PATH``: EnterpriseRAG-Bench (Onyx) from its export.

Questions: the official ``questions.jsonl`` (one object per line: ``question_id``, ``question_type``,
``source_types``, ``question``, ``expected_doc_ids``, ``gold_answer``, ``answer_facts``).

Documents (``--documents``; every file under the path, in sorted path order), any of the export's forms:

* the plain-text export ``<source>/.../dsid_<32 hex>__<slug>.txt``: ``_id`` = the ``dsid_<hex>`` file-name
  prefix, title = the first line, body = the rest (the export writes the title, a blank line, then the
  content fields joined by newlines);
* the raw per-source JSON (``generated_data/sources/<source>/.../<slug>.json``) with ``dataset_doc_uuid``,
  ``title_field_name`` and ``content_field_names``: title = that field, body = the content fields joined by
  newlines (list values joined by newlines), exactly what the export writes;
* a BEIR ``corpus.jsonl`` (``_id`` = dsid, ``title``, ``text``), the slice form PROVENANCE.md describes.

Other files (e.g. the sources' ``agents.md``, project JSON without ``dataset_doc_uuid``) are counted as
``not_a_document``. Two files with one dsid (the benchmark's near-duplicate noise documents) become one
document whose body is both bodies joined by a blank line, in path order (``merged_same_id``; identical
bodies are ``duplicate``). The shared data has questions and qrels but NO documents
(``../shared/data/enterprise_rag/PROVENANCE.md``): without documents the loader refuses with a clear message.

Queries: questions with ``expected_doc_ids`` (the 30 ``info_not_found`` / ``high_level`` questions have
none: ``unanswerable``, not loaded); qrels = the expected documents present in the corpus (relevance 1);
an expected document the corpus lacks is counted (``erb_qrels`` ``missing_doc``) and quarantined, and a
question none of whose documents is present is not loaded (``no_judged_document``); ``gold_answer`` is
the query's gold answer (``query_answers``; funnel ``erb_answers``: a missing or blank one is counted
``no_gold_answer``, one that is not a string -- a number, a list -- is ``not_a_string`` and quarantined, and
the query is loaded without an answer). ``query_type`` = ``question_type``; table labels ``erb_source`` = its
``source_types`` (sorted, joined by ``+``), where given. A load that would leave no
document or no query is refused before anything is written (the corpus keeps what it had).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Iterator

import duckdb

from ingest.corpora.flat import FlatCorpus, write_flat_corpus
from ingest.corpora.jsonl import iter_jsonl, json_kind
from ingest.corpora.utf8 import read_text
from ingest.errors import IngestError

_EXPORT_NAME = re.compile(r"^(dsid_[0-9a-f]{32})__.*\.txt$")
NO_CORPUS = (
    "the shared EnterpriseRAG-Bench folder holds questions and qrels only (no documents); download the "
    "official export (onyx-dot-app/EnterpriseRAG-Bench: export_data/ .txt files or generated_data/sources/ "
    "JSON) or build the slice PROVENANCE.md describes, and pass it with --documents"
)


def _json_document(path: Path, data: dict) -> tuple[str, str, str]:
    """``(dsid, title, body)`` of a raw source JSON document (module doc)."""
    title_field, content_fields = data.get("title_field_name"), data.get("content_field_names")
    if not isinstance(title_field, str) or not isinstance(content_fields, list) or title_field not in data:
        raise IngestError(
            str(path), data["dataset_doc_uuid"], "source JSON lacks a valid title_field_name / content_field_names"
        )
    parts = []
    for name in content_fields:
        if name not in data:
            raise IngestError(str(path), data["dataset_doc_uuid"], f"content field {name!r} is missing")
        value = data[name]
        parts.append("\n".join(map(str, value)) if isinstance(value, list) else str(value))
    return data["dataset_doc_uuid"], str(data[title_field]).strip(), "\n".join(parts).strip()


def iter_documents(root: Path, built: FlatCorpus) -> Iterator[tuple[str, str, str, str]]:
    """Yield ``(dsid, title, body, source file)`` for every document under ``root`` (module doc)."""
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for path in files:
        if path.name == "corpus.jsonl":
            for number, rec in iter_jsonl(path, ("_id", "text")):
                yield rec["_id"], str(rec.get("title") or "").strip(), rec["text"].strip(), f"{path}:{number}"
            continue
        m = _EXPORT_NAME.match(path.name)
        if m:
            text = read_text(path)
            title, _, body = text.partition("\n")
            yield m.group(1), title.strip(), body.strip(), str(path)
        elif path.suffix == ".json":
            try:
                data = json.loads(read_text(path))
            except json.JSONDecodeError as exc:
                raise IngestError(str(path), f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
            if isinstance(data, dict) and isinstance(data.get("dataset_doc_uuid"), str):
                yield (*_json_document(path, data), str(path))
            else:
                built.count("erb_documents", "not_a_document")
        else:
            built.count("erb_documents", "not_a_document")


def build_enterprise_rag(questions: Path, documents: Path | str | None, corpus: str = "enterprise_rag") -> FlatCorpus:
    """Read the questions and the documents into a :class:`FlatCorpus` (no warehouse access)."""
    questions = Path(questions)
    if not questions.is_file():
        raise IngestError(str(questions), None, "questions file not found")
    if documents is None or not Path(documents).exists():
        raise IngestError(str(documents or questions.parent), None, "no EnterpriseRAG-Bench documents", NO_CORPUS)
    built = FlatCorpus(corpus, (str(questions), str(documents)), meta={"erb_documents": str(documents)})
    merged: dict[str, dict] = {}  # dsid -> {title, body, source}
    for dsid, title, body, source in iter_documents(Path(documents), built):
        built.count("erb_documents", "input")
        if dsid not in merged:
            merged[dsid] = {"title": title, "body": body, "source": source}
        elif merged[dsid]["body"] == body:
            built.count("erb_documents", "duplicate")
        else:
            merged[dsid]["body"] = (merged[dsid]["body"] + "\n\n" + body).strip()
            built.count("erb_documents", "merged_same_id")
    if not merged:
        raise IngestError(str(documents), None, "no EnterpriseRAG-Bench documents found", NO_CORPUS)
    present: set[str] = set()
    for dsid in sorted(merged):
        doc = merged[dsid]
        if not doc["body"]:
            built.count("erb_documents", "empty_text")
            built.quarantine_record(doc["source"], dsid, "erb_documents", "empty text")
            continue
        built.add_document(dsid, doc["title"], doc["body"], doc["source"], None)
        present.add(dsid)
        built.count("erb_documents", "kept")

    seen: set[str] = set()
    for number, rec in iter_jsonl(questions, ("question_id", "question", "question_type")):
        qid = rec["question_id"]
        expected = rec.get("expected_doc_ids")
        if not isinstance(expected, list) or not all(isinstance(d, str) for d in expected):
            raise IngestError(str(questions), f"line {number}", "'expected_doc_ids' must be a list of strings")
        if qid in seen:
            raise IngestError(str(questions), f"line {number}", f"duplicate question_id {qid!r}")
        seen.add(qid)
        built.count("erb_questions", "input")
        if not expected:
            built.count("erb_questions", "unanswerable")
            continue
        judged = []
        for dsid in dict.fromkeys(expected):
            built.count("erb_qrels", "input")
            if dsid in present:
                judged.append(dsid)
                built.count("erb_qrels", "kept")
            else:
                built.count("erb_qrels", "missing_doc")
                built.quarantine_record(
                    str(questions), f"{qid} -> {dsid}", "erb_qrels", "expected document not in the corpus"
                )
        if not judged:
            built.count("erb_questions", "no_judged_document")
            continue
        query_id = built.add_query(qid, rec["question"], rec["question_type"])
        sources = rec.get("source_types")
        if isinstance(sources, list) and sources and all(isinstance(x, str) and x.strip() for x in sources):
            built.add_label(query_id, "erb_source", "+".join(sorted({x.strip() for x in sources})), str(questions))
        for dsid in judged:
            built.add_qrel(query_id, f"{corpus}/{dsid}", 1)
        answer = rec.get("gold_answer")
        built.count("erb_answers", "input")
        if isinstance(answer, str) and answer.strip():
            built.add_answers(query_id, [answer])
            built.count("erb_answers", "kept")
        elif answer is None or isinstance(answer, str):
            built.count("erb_answers", "no_gold_answer")
        else:  # a number, list or object: loaded without an answer, never silently
            built.count("erb_answers", "not_a_string")
            built.quarantine_record(
                f"{questions}:{number}",
                qid,
                "erb_answers",
                f"gold_answer is {json_kind(answer)}, not a string: the query is loaded without a gold answer",
            )
        built.count("erb_questions", "kept")
    return built


def load_enterprise_rag(
    con: duckdb.DuckDBPyConnection, questions: Path | str, documents: Path | str | None, corpus: str = "enterprise_rag"
) -> dict:
    """Build (:func:`build_enterprise_rag`) and replace the corpus's rows in one transaction; returns the summary."""
    started = time.perf_counter()
    built = build_enterprise_rag(Path(questions), documents, corpus)
    return {**write_flat_corpus(con, built), "seconds": time.perf_counter() - started}
