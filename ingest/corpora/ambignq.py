"""``ragwh ingest ambignq QUESTIONS --passages CORPUS``: AmbigNQ questions over a passages file you supply.

Input: the AmbigNQ (light) questions, a JSON list of ``{id, question, annotations}`` where an annotation
is ``{"type": "singleAnswer", "answer": [...]}`` or ``{"type": "multipleQAs", "qaPairs": [{"question",
"answer": [...]}]}``; and the passages in BEIR corpus layout (``corpus.jsonl`` lines ``{_id, title,
text}``; pass the file or its directory). No passages ship with the shared data
(``../shared/data/ambignq/PROVENANCE.md``): without them the loader refuses with a clear message.

Output (:mod:`ingest.corpora.flat`): one document per passage (``<corpus>/<_id>``); one query per
question (``query_type`` ``ambiguous`` when any annotation is ``multipleQAs``, else ``single``); its
gold answers (``query_answers``) are every distinct answer string of every annotation, in file order;
its qrels (relevance 1) are the passages whose SQuAD-normalized **text** contains any normalized answer
as whole tokens (:func:`udfs.metrics.squad.contains_answer`; the title is not searched, as in DPR's
``has_answer``). Candidate passages come from an inverted index of normalized tokens (a passage must
hold every token of the answer), then the string test decides, so the cost is not questions x passages.

Funnel stages: ``ambignq_passages`` (input, empty_text [quarantined], kept), ``ambignq_questions``
(input, no_answer, no_relevant_passage, kept: questions without a relevant passage cannot be scored by
document metrics and are not loaded), ``ambignq_qrels`` (kept). Malformed records raise
:class:`IngestError` naming the file and the record.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path

import duckdb

from ingest.corpora.flat import FlatCorpus, write_flat_corpus
from ingest.corpora.jsonl import iter_jsonl
from ingest.corpora.utf8 import read_text
from ingest.errors import IngestError
from udfs.metrics.squad import contains_answer, normalize_answer

NO_PASSAGES = (
    "AmbigNQ has no passages in the shared data; supply a passages file in BEIR corpus layout "
    "(corpus.jsonl with _id, title, text), e.g. the ALCE/DPR Wikipedia passages, with --passages"
)


def passages_file(passages: Path | str | None) -> Path:
    """``corpus.jsonl`` itself or inside the given directory; :class:`IngestError` when absent."""
    if passages is None:
        raise IngestError("ambignq", None, "no passages file given", NO_PASSAGES)
    path = Path(passages)
    path = path / "corpus.jsonl" if path.is_dir() else path
    if not path.is_file():
        raise IngestError(str(path), None, "passages file not found", NO_PASSAGES)
    return path


def question_answers(path: Path, index: int, rec: object) -> tuple[str, str, str, list[str]]:
    """``(id, question, query_type, answers)`` of one record; raises on a malformed record."""
    rid = rec.get("id") if isinstance(rec, dict) else None
    where = f"{index} (id {rid!r})" if rid else str(index)
    if not isinstance(rec, dict) or not isinstance(rid, str) or not isinstance(rec.get("question"), str):
        raise IngestError(str(path), where, "expected an object with string 'id' and 'question'")
    annotations = rec.get("annotations")
    if not isinstance(annotations, list):
        raise IngestError(str(path), where, "'annotations' must be a list")
    answers: list[str] = []
    ambiguous = False
    for a in annotations:
        kind = a.get("type") if isinstance(a, dict) else None
        if kind == "singleAnswer":
            groups = [a.get("answer")]
        elif kind == "multipleQAs" and isinstance(a.get("qaPairs"), list):
            ambiguous = True
            groups = [p.get("answer") if isinstance(p, dict) else None for p in a["qaPairs"]]
        else:
            raise IngestError(
                str(path), where, f"annotation type {kind!r} is not singleAnswer or multipleQAs with qaPairs"
            )
        for group in groups:
            if not isinstance(group, list) or not all(isinstance(x, str) for x in group):
                raise IngestError(str(path), where, "an annotation's 'answer' must be a list of strings")
            answers.extend(x for x in group if x.strip() and x not in answers)
    return rid, rec["question"], "ambiguous" if ambiguous else "single", answers


def build_ambignq(questions: Path, passages: Path | str | None, corpus: str = "ambignq") -> FlatCorpus:
    """Read questions and passages into a :class:`FlatCorpus` with answer-match qrels (no warehouse access)."""
    questions = Path(questions)
    source = passages_file(passages)
    if not questions.is_file():
        raise IngestError(str(questions), None, "questions file not found")
    built = FlatCorpus(corpus, (str(questions), str(source)), meta={"ambignq_passages": str(source)})
    texts: dict[str, str] = {}  # doc_id -> normalized text
    ids: set[str] = set()
    for number, rec in iter_jsonl(source, ("_id", "text")):
        built.count("ambignq_passages", "input")
        doc_id = f"{corpus}/{rec['_id']}"
        if doc_id in ids:
            raise IngestError(str(source), f"line {number}", f"duplicate passage _id {rec['_id']!r}")
        ids.add(doc_id)
        body, title = rec["text"].strip(), str(rec.get("title") or "").strip()
        if not body:
            built.count("ambignq_passages", "empty_text")
            built.quarantine_record(str(source), rec["_id"], "ambignq_passages", "empty text")
            continue
        built.add_document(rec["_id"], title, body, str(source), None)
        texts[doc_id] = normalize_answer(body)
        built.count("ambignq_passages", "kept")
    if not texts:
        raise IngestError(str(source), None, "no passages with text", NO_PASSAGES)
    postings: dict[str, set[str]] = defaultdict(set)
    for doc_id, text in texts.items():
        for token in set(text.split()):
            postings[token].add(doc_id)
    try:
        records = json.loads(read_text(questions))
    except json.JSONDecodeError as exc:
        raise IngestError(str(questions), f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    if not isinstance(records, list):
        raise IngestError(str(questions), None, "expected a JSON list of AmbigNQ questions")
    seen: set[str] = set()
    for index, rec in enumerate(records):
        rid, question, query_type, answers = question_answers(questions, index, rec)
        if rid in seen:
            raise IngestError(str(questions), f"{index} (id {rid!r})", "duplicate id")
        seen.add(rid)
        built.count("ambignq_questions", "input")
        normalized = sorted({n for n in map(normalize_answer, answers) if n})
        if not normalized:
            built.count("ambignq_questions", "no_answer")
            continue
        relevant = sorted({d for n in normalized for d in _candidates(n, postings) if contains_answer(texts[d], n)})
        if not relevant:
            built.count("ambignq_questions", "no_relevant_passage")
            continue
        query_id = built.add_query(rid, question, query_type)
        built.add_answers(query_id, answers)
        for doc_id in relevant:
            built.add_qrel(query_id, doc_id, 1)
            built.count("ambignq_qrels", "kept")
        built.count("ambignq_questions", "kept")
    return built


def _candidates(answer: str, postings: dict[str, set[str]]) -> set[str]:
    """Passages holding every token of ``answer`` (smallest posting list first)."""
    lists = sorted((postings.get(t, set()) for t in set(answer.split())), key=len)
    out = set(lists[0])
    for other in lists[1:]:
        out &= other
    return out


def load_ambignq(
    con: duckdb.DuckDBPyConnection, questions: Path | str, passages: Path | str | None, corpus: str = "ambignq"
) -> dict:
    """Build (:func:`build_ambignq`) and replace the corpus's rows in one transaction; returns the summary."""
    started = time.perf_counter()
    built = build_ambignq(Path(questions), passages, corpus)
    return {**write_flat_corpus(con, built), "seconds": time.perf_counter() - started}
