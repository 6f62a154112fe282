"""``ragwh ingest beir DIR``: a BEIR-layout directory as a corpus without structure.

Input (BEIR layout): ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``,
``text``) and ``qrels/<split>.tsv`` (``query-id corpus-id score``, optional header line).

Output: one document per corpus line (``<corpus>/<_id>``, body = the stripped ``text``; see
:mod:`ingest.corpora.flat`), the queries that appear in the split's qrels (``query_type = 'beir'``,
no document), and ``qrels(query_id, doc_id, relevance = score)``. The corpus name defaults to the
directory's name without a leading ``beir_`` (``beir_scifact`` -> ``scifact``).

Funnel stages: ``beir_documents`` (input, empty_text [quarantined], kept), ``beir_queries`` (input,
not_in_split, kept), ``beir_qrels`` (input, doc_quarantined, kept). Malformed lines, duplicate ids,
and qrels naming unknown queries or documents raise :class:`IngestError` with file and line.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import duckdb

from ingest.corpora.flat import FlatCorpus, write_flat_corpus
from ingest.corpora.jsonl import iter_jsonl
from ingest.corpora.utf8 import lines
from ingest.errors import IngestError


def corpus_name(directory: Path, corpus: str | None) -> str:
    """``corpus`` if given, else the directory's name without a leading ``beir_``."""
    return corpus or directory.resolve().name.removeprefix("beir_")


def read_jsonl(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, record)`` of a BEIR-layout JSONL file (:func:`ingest.corpora.jsonl.iter_jsonl`)."""
    return iter_jsonl(path, required, "a BEIR directory holds corpus.jsonl, queries.jsonl, qrels/")


def read_qrels(path: Path) -> Iterator[tuple[int, str, str, int]]:
    """Yield ``(line number, query id, doc id, score)`` of a BEIR qrels TSV (header line optional)."""
    for number, line in lines(path):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.rstrip("\n").split("\t")]
        if len(fields) != 3:
            raise IngestError(str(path), f"line {number}", f"expected 3 tab-separated fields, got {len(fields)}")
        if number == 1 and fields[2].lower() == "score":
            continue
        try:
            score = int(fields[2])
        except ValueError:
            raise IngestError(str(path), f"line {number}", f"score {fields[2]!r} is not an integer") from None
        yield number, fields[0], fields[1], score


def build_beir(directory: Path, corpus: str | None = None, split: str = "test") -> FlatCorpus:
    """Read a BEIR directory into a :class:`FlatCorpus` (no warehouse access)."""
    directory = Path(directory)
    built = FlatCorpus(corpus_name(directory, corpus), (str(directory),), meta={"beir_split": split})
    corpus_file, queries_file, qrels_file = (
        directory / "corpus.jsonl",
        directory / "queries.jsonl",
        directory / "qrels" / f"{split}.tsv",
    )
    if not qrels_file.is_file():
        raise IngestError(
            str(qrels_file), None, "qrels file not found", "pass --split with an existing qrels/<split>.tsv"
        )
    doc_ids: dict[str, str | None] = {}  # source id -> doc_id (None: quarantined)
    for number, rec in read_jsonl(corpus_file, ("_id", "text")):
        source_id = rec["_id"]
        if source_id in doc_ids:
            raise IngestError(str(corpus_file), f"line {number}", f"duplicate document _id {source_id!r}")
        built.count("beir_documents", "input")
        body, title = rec["text"].strip(), str(rec.get("title") or "").strip()
        if not body:
            built.count("beir_documents", "empty_text")
            built.quarantine_record(str(corpus_file), source_id, "beir_documents", "empty text")
            doc_ids[source_id] = None
            continue
        doc_ids[source_id] = built.add_document(source_id, title, body, str(corpus_file), None)
        built.count("beir_documents", "kept")

    judged: dict[str, list[tuple[int, str, int]]] = {}
    for number, qid, did, score in read_qrels(qrels_file):
        if did not in doc_ids:
            raise IngestError(str(qrels_file), f"line {number}", f"corpus-id {did!r} is not in {corpus_file.name}")
        if any(d == did for _, d, _ in judged.get(qid, [])):
            raise IngestError(str(qrels_file), f"line {number}", f"duplicate judgment for ({qid!r}, {did!r})")
        judged.setdefault(qid, []).append((number, did, score))

    texts: dict[str, str] = {}
    for number, rec in read_jsonl(queries_file, ("_id", "text")):
        if rec["_id"] in texts:
            raise IngestError(str(queries_file), f"line {number}", f"duplicate query _id {rec['_id']!r}")
        texts[rec["_id"]] = rec["text"]
        built.count("beir_queries", "input")
        if rec["_id"] not in judged:
            built.count("beir_queries", "not_in_split")
    unknown = sorted(set(judged) - set(texts))
    if unknown:
        line = min(n for q in unknown for n, _, _ in judged[q])
        raise IngestError(
            str(qrels_file),
            f"line {line}",
            f"query-id {unknown[0]!r} is not in {queries_file.name} ({len(unknown)} unknown query ids)",
        )
    for qid in sorted(judged):
        query_id = built.add_query(qid, texts[qid], "beir")
        built.count("beir_queries", "kept")
        for _, did, score in sorted(judged[qid], key=lambda j: j[1]):
            built.count("beir_qrels", "input")
            if doc_ids[did] is None:
                built.count("beir_qrels", "doc_quarantined")
                continue
            built.add_qrel(query_id, doc_ids[did], score)
            built.count("beir_qrels", "kept")
    return built


def load_beir(
    con: duckdb.DuckDBPyConnection, directory: Path | str, corpus: str | None = None, split: str = "test"
) -> dict:
    """Build (:func:`build_beir`) and replace the corpus's rows in one transaction; returns the summary."""
    started = time.perf_counter()
    built = build_beir(Path(directory), corpus, split)
    return {**write_flat_corpus(con, built), "split": split, "seconds": time.perf_counter() - started}
