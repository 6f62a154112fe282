"""Tiny, valid inputs for every loader (the reliability suite's base warehouse loads one corpus of
each kind), and helpers that derive broken variants from them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ingest.corpora.wiki_fixtures import sample_pages, write_jsonl
from tests.reliability.cli import DEMO_FILE

BEIR_CORPUS = [
    {"_id": "d1", "title": "First", "text": "Alpha beta gamma."},
    {"_id": "d2", "title": "Second", "text": "Delta epsilon."},
    {"_id": "d3", "title": "Third", "text": "Zeta eta theta."},
]
BEIR_QUERIES = [{"_id": "q1", "text": "alpha?"}, {"_id": "q2", "text": "zeta?"}]
BEIR_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n"


def hotpot_record(_id: str, question: str, titles: list[str]) -> dict:
    return {
        "_id": _id,
        "question": question,
        "answer": "a",
        "type": "bridge",
        "level": "easy",
        "supporting_facts": [[titles[0], 0]],
        "context": [[t, [f"{t} is a paragraph about {t.lower()}.", " It has two sentences."]] for t in titles],
    }


HOTPOT_RECORDS = [
    hotpot_record("h1", "Who is Ada?", ["Ada", "Bob"]),
    hotpot_record("h2", "Where is Oslo?", ["Oslo", "Ada"]),
]


def write_beir(directory: Path, corpus=BEIR_CORPUS, queries=BEIR_QUERIES, qrels: str = BEIR_QRELS) -> Path:
    (directory / "qrels").mkdir(parents=True, exist_ok=True)
    (directory / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (directory / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries))
    (directory / "qrels" / "test.tsv").write_text(qrels)
    return directory


def write_hotpot(path: Path, records=HOTPOT_RECORDS) -> Path:
    path.write_text(json.dumps(records, indent=1))
    return path


def write_wiki(path: Path, pages=None) -> Path:
    """The ingestion tests' sample pages (3 pass the default filters) as JSONL."""
    return write_jsonl(path, sample_pages() if pages is None else pages)


def demo_papers() -> dict:
    return json.loads(DEMO_FILE.read_text(encoding="utf-8"))


def write_qasper(path: Path, papers: dict) -> Path:
    path.write_text(json.dumps(papers, indent=1))
    return path


# the tiny corpora besides the demo, as (corpus name, ingest arguments after `ragwh ingest`)
def base_loads(folder: Path) -> list[list[str]]:
    return [
        ["beir", str(write_beir(folder / "beir_mini")), "--corpus", "mini"],
        ["hotpotqa", str(write_hotpot(folder / "hotpot.json")), "--corpus", "hp"],
        ["wikipedia", str(write_wiki(folder / "wiki.jsonl")), "--corpus", "wiki"],
    ]


# the rewriting study's other loaders: EnterpriseRAG-Bench (questions + a BEIR-slice corpus.jsonl) and
# AmbigNQ (a JSON list of questions + passages in BEIR corpus layout)
ERB_QUESTIONS = [
    {
        "question_id": "e1",
        "question_type": "basic",
        "source_types": ["slack"],
        "question": "Alpha?",
        "expected_doc_ids": ["dsid_a"],
        "gold_answer": "alpha",
    },
    {
        "question_id": "e2",
        "question_type": "basic",
        "source_types": ["slack"],
        "question": "Zeta?",
        "expected_doc_ids": ["dsid_b"],
        "gold_answer": "zeta",
    },
]
ERB_DOCUMENTS = [
    {"_id": "dsid_a", "title": "A", "text": "Alpha beta."},
    {"_id": "dsid_b", "title": "B", "text": "Zeta eta."},
]
AMBIGNQ_QUESTIONS = [
    {"id": "a1", "question": "Which letter?", "annotations": [{"type": "singleAnswer", "answer": ["alpha"]}]},
    {"id": "a2", "question": "Which one?", "annotations": [{"type": "singleAnswer", "answer": ["zeta"]}]},
]


def write_lines(path: Path, lines: list) -> Path:
    """Each item a line: a str as it is, anything else as JSON."""
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def write_erb(folder: Path, questions=ERB_QUESTIONS, documents=ERB_DOCUMENTS) -> tuple[Path, Path]:
    """``(questions.jsonl, documents folder)`` of a tiny EnterpriseRAG-Bench corpus."""
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    write_lines(folder / "docs" / "corpus.jsonl", documents)
    return write_lines(folder / "questions.jsonl", questions), folder / "docs"


def write_ambignq(folder: Path, questions=AMBIGNQ_QUESTIONS, passages=ERB_DOCUMENTS) -> tuple[Path, Path]:
    """``(questions JSON, passages corpus.jsonl)`` of a tiny AmbigNQ corpus."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "questions.json").write_text(json.dumps(questions))
    return folder / "questions.json", write_lines(folder / "corpus.jsonl", passages)


def rewriting_loads(folder: Path) -> list[list[str]]:
    """The tiny EnterpriseRAG-Bench ('erb') and AmbigNQ ('anq') corpora, as `ragwh ingest` arguments."""
    erb_q, erb_docs = write_erb(folder / "erb")
    anq_q, anq_p = write_ambignq(folder / "anq")
    return [
        ["enterprise-rag", str(erb_q), "--documents", str(erb_docs), "--corpus", "erb"],
        ["ambignq", str(anq_q), "--passages", str(anq_p), "--corpus", "anq"],
    ]
