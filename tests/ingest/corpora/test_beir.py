"""BEIR loader: documents/paragraph offsets, split filter, funnel, errors naming file and line."""

from __future__ import annotations

import json

import pytest

from ingest.corpora.beir import load_beir
from ingest.errors import IngestError

TABLES = ("documents", "paragraphs", "queries", "qrels", "funnel", "quarantine", "corpus_meta")


def _write(directory, corpus, queries, qrels):
    (directory / "qrels").mkdir(parents=True)
    (directory / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    (directory / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in queries))
    (directory / "qrels" / "test.tsv").write_text(qrels)
    return directory


@pytest.fixture()
def tiny(tmp_path):
    return _write(
        tmp_path / "beir_tiny",
        [
            {"_id": "d1", "title": "First", "text": " Alpha beta. Gamma. "},
            {"_id": "d2", "title": "", "text": "No title here."},
            {"_id": "d3", "title": "Empty", "text": "   "},
        ],
        [{"_id": "q1", "text": "alpha?"}, {"_id": "q2", "text": "unjudged"}, {"_id": "q3", "text": "empty doc"}],
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq3\td3\t2\n",
    )


def _snapshot(con):
    return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in TABLES}


def test_tiny_corpus(con, tiny):
    summary = load_beir(con, tiny)
    assert (summary["corpus"], summary["documents"], summary["queries"], summary["qrels"]) == ("tiny", 2, 2, 2)
    docs = con.execute("SELECT doc_id, title, text FROM documents ORDER BY doc_id").fetchall()
    assert docs == [("tiny/d1", "First", "First\n\nAlpha beta. Gamma."), ("tiny/d2", "", "\n\nNo title here.")]
    for doc_id, text, s, e in con.execute(
        "SELECT doc_id, text, char_start, char_end FROM paragraphs JOIN documents USING (doc_id)"
    ).fetchall():
        assert text[s:e] == {"tiny/d1": "Alpha beta. Gamma.", "tiny/d2": "No title here."}[doc_id]
    assert con.execute("SELECT * FROM queries ORDER BY query_id").fetchall() == [
        ("tiny/q1", None, "tiny", "alpha?", "beir"),
        ("tiny/q3", None, "tiny", "empty doc", "beir"),
    ]
    assert con.execute("SELECT * FROM qrels ORDER BY ALL").fetchall() == [
        ("tiny/q1", "tiny/d1", 1),
        ("tiny/q1", "tiny/d2", 0),
    ]
    funnel = {(s, r): n for _, s, r, n in con.execute("SELECT * FROM funnel").fetchall()}
    assert funnel == {
        ("beir_documents", "input"): 3,
        ("beir_documents", "empty_text"): 1,
        ("beir_documents", "kept"): 2,
        ("beir_queries", "input"): 3,
        ("beir_queries", "not_in_split"): 1,
        ("beir_queries", "kept"): 2,
        ("beir_qrels", "input"): 3,
        ("beir_qrels", "doc_quarantined"): 1,
        ("beir_qrels", "kept"): 2,
    }
    assert con.execute("SELECT record_id, reason FROM quarantine").fetchall() == [("d3", "empty text")]
    assert con.execute("SELECT key, value FROM corpus_meta").fetchall() == [("beir_split", "test")]
    before = _snapshot(con)
    load_beir(con, tiny)
    assert _snapshot(con) == before  # reload is idempotent
    load_beir(con, tiny, corpus="other")
    assert con.execute("SELECT count(*) FROM documents WHERE corpus = 'other'").fetchall()[0][0] == 2


@pytest.mark.parametrize(
    "corpus_lines, qrels, message",
    [
        (
            '{"_id": "d1", "text": "x"}\n{"_id": "d2", "text": \n',
            "q1\td1\t1\n",
            r"corpus.jsonl, record line 2: invalid JSON",
        ),
        (
            '{"_id": "d1", "text": "x"}\n{"_id": "d1", "text": "y"}\n',
            "q1\td1\t1\n",
            r"line 2: duplicate document _id 'd1'",
        ),
        ('{"_id": "d1"}\n', "q1\td1\t1\n", r"corpus.jsonl, record line 1: missing or non-string field\(s\) \['text'\]"),
        ('{"_id": "d1", "text": "x"}\n', "q1\td1\t1\nq1\tdX\t1\n", r"test.tsv, record line 2: corpus-id 'dX'"),
        ('{"_id": "d1", "text": "x"}\n', "q1\td1\tyes\n", r"test.tsv, record line 1: score 'yes'"),
        ('{"_id": "d1", "text": "x"}\n', "q1\td1\t1\nqZ\td1\t1\n", r"test.tsv, record line 2: query-id 'qZ' is not"),
    ],
)
def test_bad_input_names_file_and_line_and_writes_nothing(con, tmp_path, tiny, corpus_lines, qrels, message):
    load_beir(con, tiny)
    before = _snapshot(con)
    bad = tmp_path / "bad"
    (bad / "qrels").mkdir(parents=True)
    (bad / "corpus.jsonl").write_text(corpus_lines)
    (bad / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (bad / "qrels" / "test.tsv").write_text(qrels)
    with pytest.raises(IngestError, match=message):
        load_beir(con, bad, corpus="tiny")
    assert _snapshot(con) == before
    with pytest.raises(IngestError, match="qrels file not found"):
        load_beir(con, tiny, split="dev")


def test_real_scifact(con, shared_data):
    summary = load_beir(con, shared_data / "beir_scifact")
    # PROVENANCE.md: 5,183 documents, 300 test queries, 339 judgments (all score 1)
    assert (summary["corpus"], summary["documents"], summary["queries"], summary["qrels"]) == (
        "scifact",
        5183,
        300,
        339,
    )
    assert con.execute("SELECT count(*) FROM qrels WHERE relevance <> 1").fetchall()[0][0] == 0
    assert (
        con.execute(
            "SELECT count(*) FROM paragraphs p JOIN documents d USING (doc_id) "
            "WHERE p.char_start <> length(d.title) + 2 OR p.char_end <> length(d.text)"
        ).fetchall()[0][0]
        == 0
    )


@pytest.mark.parametrize("target, line", [("corpus.jsonl", 2), ("queries.jsonl", 3), ("qrels/test.tsv", 3)])
def test_non_utf8_names_file_and_line_and_writes_nothing(con, tiny, target, line):
    """The error used to be Python's bare UnicodeDecodeError (no file, no line)."""
    load_beir(con, tiny)
    before = _snapshot(con)
    path = tiny / target
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = lines[line - 1][:1] + b"\xe9" + lines[line - 1][1:]  # latin-1 e-acute: not UTF-8
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(IngestError, match=rf"{target}, record line {line}: byte 0xe9 at offset \d+ is not valid UTF-8"):
        load_beir(con, tiny)
    assert _snapshot(con) == before
