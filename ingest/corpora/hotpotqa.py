"""``ragwh ingest hotpotqa FILE``: HotpotQA distractor JSON as a corpus without structure.

Input: the original distractor format, a JSON list of ``{_id, question, supporting_facts [[title,
sent_id]], context [[title, [sentences]]], type, level, answer}`` — the dev file or the official train
file ``hotpot_train_v1.1.json`` (``ragwh fetch hotpotqa``; 566 MB, read as a stream, so ``--limit 5000``
keeps the first 5,000 questions in file order in constant memory; the rewriting study's setting).
The corpus is every context paragraph of the loaded questions (deduplicated by title, below); each
question's ``answer`` is its gold answer (``query_answers``, one row).

Output (:mod:`ingest.corpora.flat`): each context paragraph is a document ``<corpus>/<title>`` whose
body is ``"".join(sentences).strip()`` (HotpotQA sentences carry their own leading spaces); the same
title with the same body across questions is one document (``duplicate``); the same title with a
*different* body keeps the first body in file order and quarantines the later one
(``conflicting_title``, its question's qrels still point at the title's document). Each question is
a query (``query_type`` = its ``type``; table labels ``hotpotqa_level`` = its ``level``, easy / medium /
hard, where given); its distinct supporting-fact titles are its qrels with relevance 1.

Funnel stages: ``hotpotqa_questions`` (input, beyond_limit, empty_question [quarantined: a blank
question is not loaded, nor its paragraphs], kept), ``hotpotqa_paragraphs`` (input, duplicate,
conflicting_title, empty_text, empty_title [quarantined: documents are named by title], kept). A load
that would leave no document or no query is refused before anything is written. A malformed file or record raises
:class:`IngestError` naming the file and the line (JSON syntax) or record (index and ``_id``).
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb

from ingest.corpora.flat import FlatCorpus, write_flat_corpus
from ingest.corpora.json_stream import iter_json_array
from ingest.errors import IngestError


def _record_error(path: Path, index: int, record: object, problem: str) -> IngestError:
    rid = record.get("_id") if isinstance(record, dict) else None
    return IngestError(str(path), f"{index} (_id {rid!r})" if rid else str(index), problem)


def _check(path: Path, index: int, rec: object) -> None:
    """Raise :class:`IngestError` unless ``rec`` has the distractor format's fields and shapes."""
    if not isinstance(rec, dict):
        raise _record_error(path, index, rec, "record is not a JSON object")
    for key in ("_id", "question", "type", "answer"):
        if not isinstance(rec.get(key), str):
            raise _record_error(path, index, rec, f"missing or non-string field {key!r}")
    context = rec.get("context")
    if not isinstance(context, list) or not all(
        isinstance(c, list)
        and len(c) == 2
        and isinstance(c[0], str)
        and isinstance(c[1], list)
        and all(isinstance(s, str) for s in c[1])
        for c in context
    ):
        raise _record_error(path, index, rec, "'context' must be a list of [title, [sentences]]")
    facts = rec.get("supporting_facts")
    if not isinstance(facts, list) or not all(
        isinstance(f, list) and len(f) == 2 and isinstance(f[0], str) for f in facts
    ):
        raise _record_error(path, index, rec, "'supporting_facts' must be a list of [title, sentence index]")
    titles = {c[0] for c in context}
    missing = sorted({f[0] for f in facts} - titles)
    if missing:
        raise _record_error(path, index, rec, f"supporting-fact titles {missing} are not among its context titles")


def build_hotpotqa(
    path: Path, corpus: str = "hotpotqa", limit: int | None = None, split: str | None = "dev"
) -> FlatCorpus:
    """Read a distractor JSON file into a :class:`FlatCorpus` (no warehouse access).

    Records after the first ``limit`` are only counted (``beyond_limit``), never checked or kept."""
    path = Path(path)
    if not path.is_file():
        raise IngestError(str(path), None, "file not found", "download the train file with `ragwh fetch hotpotqa`")
    built = FlatCorpus(corpus, (str(path),), meta={"hotpotqa_split": split or ""})
    built.count("hotpotqa_questions", "input", 0)
    built.count("hotpotqa_questions", "beyond_limit", 0)
    bodies: dict[str, str] = {}  # title -> body of its document
    seen_ids: set[str] = set()
    for index, rec in iter_json_array(path, "a JSON list of questions (HotpotQA distractor format)"):
        built.count("hotpotqa_questions", "input")
        if limit is not None and index >= limit:
            built.count("hotpotqa_questions", "beyond_limit")
            continue
        _check(path, index, rec)
        if rec["_id"] in seen_ids:
            raise _record_error(path, index, rec, "duplicate _id")
        seen_ids.add(rec["_id"])
        if not rec["question"].strip():
            built.count("hotpotqa_questions", "empty_question")
            built.quarantine_record(
                str(path),
                f"{index} (_id {rec['_id']!r})",
                "hotpotqa_questions",
                "the question is empty or whitespace: not loaded, nor its paragraphs",
            )
            continue
        for title, sentences in rec["context"]:
            built.count("hotpotqa_paragraphs", "input")
            body = "".join(sentences).strip()
            if not title.strip():
                built.count("hotpotqa_paragraphs", "empty_title")
                built.quarantine_record(
                    str(path),
                    f"{title!r} (question {rec['_id']})",
                    "hotpotqa_paragraphs",
                    "empty title: a document is named by its title",
                )
            elif not body:
                built.count("hotpotqa_paragraphs", "empty_text")
                built.quarantine_record(
                    str(path), f"{title} (question {rec['_id']})", "hotpotqa_paragraphs", "empty text"
                )
            elif title not in bodies:
                bodies[title] = body
                built.add_document(title, title, body, str(path), split)
                built.count("hotpotqa_paragraphs", "kept")
            elif bodies[title] == body:
                built.count("hotpotqa_paragraphs", "duplicate")
            else:
                built.count("hotpotqa_paragraphs", "conflicting_title")
                built.quarantine_record(
                    str(path),
                    f"{title} (question {rec['_id']})",
                    "hotpotqa_paragraphs",
                    "same title as an earlier paragraph with a different text; the first is kept",
                )
        query_id = built.add_query(rec["_id"], rec["question"], rec["type"])
        built.add_answers(query_id, [rec["answer"]])
        if isinstance(rec.get("level"), str) and rec["level"].strip():
            built.add_label(query_id, "hotpotqa_level", rec["level"].strip(), str(path))
        built.count("hotpotqa_questions", "kept")
        for title in sorted({f[0] for f in rec["supporting_facts"]}):
            if title not in bodies:
                raise _record_error(
                    path,
                    index,
                    rec,
                    f"supporting-fact paragraph {title!r} was not loaded (empty text or title; see the quarantine)",
                )
            built.add_qrel(query_id, f"{corpus}/{title}", 1)
    return built


def load_hotpotqa(
    con: duckdb.DuckDBPyConnection,
    path: Path | str,
    corpus: str = "hotpotqa",
    limit: int | None = None,
    split: str = "dev",
) -> dict:
    """Build (:func:`build_hotpotqa`) and replace the corpus's rows in one transaction; returns the summary.

    ``split`` is recorded in ``documents.split`` and ``corpus_meta`` (``train`` for the train file)."""
    started = time.perf_counter()
    built = build_hotpotqa(Path(path), corpus, limit, split)
    return {**write_flat_corpus(con, built), "seconds": time.perf_counter() - started}
