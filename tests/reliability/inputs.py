"""Tiny, valid inputs for every loader (the reliability suite's base warehouse loads one corpus of
each kind), and helpers that derive broken variants from them."""
from __future__ import annotations

import json
from pathlib import Path

from tests.ingest.corpora.wiki_fixtures import sample_pages, write_jsonl
from tests.reliability.cli import DEMO_FILE

BEIR_CORPUS = [{"_id": "d1", "title": "First", "text": "Alpha beta gamma."},
               {"_id": "d2", "title": "Second", "text": "Delta epsilon."},
               {"_id": "d3", "title": "Third", "text": "Zeta eta theta."}]
BEIR_QUERIES = [{"_id": "q1", "text": "alpha?"}, {"_id": "q2", "text": "zeta?"}]
BEIR_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n"


def hotpot_record(_id: str, question: str, titles: list[str]) -> dict:
    return {"_id": _id, "question": question, "answer": "a", "type": "bridge", "level": "easy",
            "supporting_facts": [[titles[0], 0]],
            "context": [[t, [f"{t} is a paragraph about {t.lower()}.", " It has two sentences."]] for t in titles]}


HOTPOT_RECORDS = [hotpot_record("h1", "Who is Ada?", ["Ada", "Bob"]),
                  hotpot_record("h2", "Where is Oslo?", ["Oslo", "Ada"])]


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
    return [["beir", str(write_beir(folder / "beir_mini")), "--corpus", "mini"],
            ["hotpotqa", str(write_hotpot(folder / "hotpot.json")), "--corpus", "hp"],
            ["wikipedia", str(write_wiki(folder / "wiki.jsonl")), "--corpus", "wiki"]]
