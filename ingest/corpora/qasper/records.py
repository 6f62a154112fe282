"""QASPER source records: reading both published layouts into one typed form, and merging files.

Two layouts hold the same content:

* the original v0.3 release JSON: ``{paper_id: {title, abstract, full_text: [{section_name,
  paragraphs}], qas: [{question, question_id, ..., answers: [{answer: {...}, annotation_id,
  worker_id}]}], figures_and_tables}}``;
* the HF ``allenai/qasper`` layout (JSONL, one paper a line, or a JSON list of such records): ``id``
  plus *parallel lists*: ``full_text: {section_name: [...], paragraphs: [[...]]}``, ``qas:
  {question: [...], question_id: [...], answers: [{answer: [...], annotation_id: [...], ...}]}``.

The layout is decided per record (``full_text`` a list -> v0.3, a dict of lists -> HF), so a file
may hold either. Both are parsed into :class:`Paper`, which keeps exactly the fields ingestion uses;
two records of the same paper are *identical* when their :class:`Paper` values are equal (the
unused fields -- worker ids, backgrounds, figures -- are not compared).

Bad input raises :class:`ingest.errors.IngestError` naming the file and the record (paper id, or
line number where no id can be read): non-UTF-8 bytes, malformed JSON, a missing field, a field of
the wrong type, parallel lists of different lengths.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ingest.corpora.jsonl import iter_jsonl
from ingest.corpora.utf8 import read_text
from ingest.errors import IngestError

_SPLIT_TOKENS = {"train": "train", "dev": "dev", "validation": "dev", "test": "test"}


@dataclass(frozen=True)
class Answer:
    """One annotator's answer (fields as in QASPER; ``yes_no`` is None unless a boolean answer)."""

    unanswerable: bool
    extractive_spans: tuple[str, ...]
    yes_no: bool | None
    free_form_answer: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    question_id: str
    text: str
    answers: tuple[Answer, ...]


@dataclass(frozen=True)
class Paper:
    """A paper as read from either layout. ``sections`` are the raw ``full_text`` entries
    ``(section_name, paragraphs)`` in source order; ``section_name`` may be None (it is in the data)."""

    paper_id: str
    title: str
    abstract: str
    sections: tuple[tuple[str | None, tuple[str, ...]], ...]
    questions: tuple[Question, ...]


@dataclass(frozen=True)
class SourcedPaper:
    """A paper with every file it was read from (sorted) and the split those file names state."""

    paper: Paper
    source_files: tuple[str, ...]
    split: str | None


@dataclass(frozen=True)
class Conflict:
    """Two or more records of one paper id whose content differs: none of them is loaded."""

    paper_id: str
    source_files: tuple[str, ...]


def split_from_filename(path: Path) -> str | None:
    """The split a file name states: a ``train`` / ``dev`` / ``validation`` / ``test`` token
    (delimited by non-letters) -> 'train' / 'dev' / 'dev' / 'test'; None when there is none or several differ."""
    found = {_SPLIT_TOKENS[t] for t in re.split(r"[^a-z]+", path.name.lower()) if t in _SPLIT_TOKENS}
    return found.pop() if len(found) == 1 else None


def read_papers(path: Path) -> list[Paper]:
    """Every paper record of one file, in file order (see the module docstring for the layouts)."""
    name = str(path)
    if path.suffix.lower() == ".jsonl":
        return [_parse_record(name, record_id, obj, None) for record_id, obj in _jsonl_objects(path)]
    content = read_text(path)
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        raise IngestError(
            name, f"line {exc.lineno}", f"malformed JSON: {exc.msg} (column {exc.colno})", "fix or re-download the file"
        ) from None
    if isinstance(data, list):  # a JSON array of HF records
        return [_parse_record(name, f"item {i}", obj, None) for i, obj in enumerate(data)]
    if isinstance(data, dict):
        if "full_text" in data and "id" in data:  # a single HF record
            return [_parse_record(name, str(data["id"]), data, None)]
        return [_parse_record(name, str(pid), obj, str(pid)) for pid, obj in data.items()]
    raise IngestError(
        name,
        None,
        f"top-level JSON is a {type(data).__name__}, expected an object or a list",
        "pass a QASPER v0.3 JSON or an allenai/qasper JSONL file",
    )


def merge_papers(files: list[Path]) -> tuple[list[SourcedPaper], list[Conflict], dict[str, int]]:
    """Read every file and merge by paper id, sorted by paper id.

    Records of one id with equal :class:`Paper` content collapse into one paper listing all their
    files; records of one id whose content differs are a :class:`Conflict` and none is kept. The
    counts: ``input`` records read, ``duplicate_identical`` redundant copies, ``conflicting_duplicate``
    records of conflicting ids, ``kept`` = input - the two (= number of merged papers).
    """
    by_id: dict[str, list[tuple[Paper, str, str | None]]] = {}
    n_input = 0
    for path in files:
        split = split_from_filename(path)
        n_before = n_input
        for paper in read_papers(path):
            n_input += 1
            by_id.setdefault(paper.paper_id, []).append((paper, str(path), split))
        if n_input == n_before:
            raise IngestError(
                str(path),
                None,
                "no QASPER papers found",
                "expected a v0.3 JSON object of papers or allenai/qasper JSONL; nothing was loaded",
            )
    merged: list[SourcedPaper] = []
    conflicts: list[Conflict] = []
    n_identical = n_conflicting = 0
    for pid in sorted(by_id):
        copies = by_id[pid]
        sources = tuple(sorted({src for _, src, _ in copies}))
        if any(p != copies[0][0] for p, _, _ in copies[1:]):
            conflicts.append(Conflict(pid, sources))
            n_conflicting += len(copies)
            continue
        n_identical += len(copies) - 1
        splits = {s for _, _, s in copies if s is not None}
        merged.append(SourcedPaper(copies[0][0], sources, splits.pop() if len(splits) == 1 else None))
    counts = {
        "input": n_input,
        "duplicate_identical": n_identical,
        "conflicting_duplicate": n_conflicting,
        "kept": len(merged),
    }
    return merged, conflicts, counts


def _jsonl_objects(path: Path) -> Iterator[tuple[str, Any]]:
    for lineno, obj in iter_jsonl(path):
        record_id = f"line {lineno}"
        if isinstance(obj.get("id"), str):
            record_id += f" (paper {obj['id']})"
        yield record_id, obj


class _Record:
    """Typed field access on one JSON object; every failure names the file and the record."""

    def __init__(self, file: str, record: str, obj: Any, where: str = ""):
        self.file, self.record, self.where = file, record, where
        if not isinstance(obj, dict):
            self.fail(f"expected an object, found {type(obj).__name__}")
        self.obj = obj

    def fail(self, problem: str) -> None:
        raise IngestError(
            self.file,
            self.record,
            f"{self.where}{problem}",
            "the file does not follow the QASPER v0.3 or allenai/qasper layout",
        )

    def get(self, key: str, *types: type, nullable: bool = False) -> Any:
        if key not in self.obj:
            self.fail(f"missing field {key!r}")
        value = self.obj[key]
        if value is None and nullable:
            return None
        if not isinstance(value, types):
            self.fail(f"field {key!r} is {type(value).__name__}, expected {' or '.join(t.__name__ for t in types)}")
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        values = self.get(key, list)
        if not all(isinstance(v, str) for v in values):
            self.fail(f"field {key!r} must be a list of strings")
        return tuple(values)

    def child(self, obj: Any, where: str) -> "_Record":
        return _Record(self.file, self.record, obj, f"{self.where}{where}: ")


def _parse_record(file: str, record_id: str, obj: Any, paper_id: str | None) -> Paper:
    rec = _Record(file, record_id, obj)
    if paper_id is None:
        paper_id = rec.get("id", str)
    title = rec.get("title", str)
    abstract = rec.get("abstract", str)
    full_text = rec.get("full_text", list, dict)
    qas = rec.get("qas", list, dict)
    if isinstance(full_text, dict):
        ft = rec.child(full_text, "full_text")
        sections = _zip_parallel(ft, ["section_name", "paragraphs"])
    else:
        sections = full_text
    parsed_sections = []
    for i, s in enumerate(sections):
        srec = rec.child(s, f"full_text[{i}]")
        parsed_sections.append((srec.get("section_name", str, nullable=True), srec.strings("paragraphs")))
    if isinstance(qas, dict):
        qrec = rec.child(qas, "qas")
        question_objs = _zip_parallel(qrec, ["question", "question_id", "answers"])
        questions = [_parse_question(rec.child(q, f"qas[{i}]"), hf=True) for i, q in enumerate(question_objs)]
    else:
        questions = [_parse_question(rec.child(q, f"qas[{i}]"), hf=False) for i, q in enumerate(qas)]
    return Paper(paper_id, title, abstract, tuple(parsed_sections), tuple(questions))


def _zip_parallel(rec: _Record, keys: list[str]) -> list[dict[str, Any]]:
    """HF parallel lists -> one dict per position; lists of unequal length are an error."""
    columns = [rec.get(k, list) for k in keys]
    lengths = {len(c) for c in columns}
    if len(lengths) > 1:
        rec.fail("parallel lists " + ", ".join(f"{k}[{len(c)}]" for k, c in zip(keys, columns)) + " differ in length")
    return [dict(zip(keys, row)) for row in zip(*columns)]


def _parse_question(q: _Record, *, hf: bool) -> Question:
    qid = q.get("question_id", str)
    text = q.get("question", str)
    if hf:  # answers: {answer: [...], annotation_id: [...], worker_id: [...]}
        answer_objs = [row["answer"] for row in _zip_parallel(q.child(q.get("answers", dict), "answers"), ["answer"])]
    else:
        answer_objs = [q.child(a, f"answers[{i}]").get("answer", dict) for i, a in enumerate(q.get("answers", list))]
    answers = []
    for i, obj in enumerate(answer_objs):
        a = q.child(obj, f"answers[{i}].answer")
        answers.append(
            Answer(
                unanswerable=a.get("unanswerable", bool),
                extractive_spans=a.strings("extractive_spans"),
                yes_no=a.get("yes_no", bool, nullable=True),
                free_form_answer=a.get("free_form_answer", str),
                evidence=a.strings("evidence"),
            )
        )
    return Question(qid, text, tuple(answers))
