"""HotpotQA loader: paragraphs as documents, title dedupe and conflicts, supporting-fact qrels."""

from __future__ import annotations

import json

import pytest

from ingest.corpora.hotpotqa import load_hotpotqa
from ingest.errors import IngestError


def _q(_id, question, facts, context, qtype="bridge"):
    return {
        "_id": _id,
        "answer": "a",
        "question": question,
        "supporting_facts": facts,
        "context": context,
        "type": qtype,
        "level": "hard",
    }


RECORDS = [
    _q(
        "a1",
        "Who?",
        [["Ed Wood", 0], ["Ed Wood", 1], ["Scott", 0]],
        [
            ["Ed Wood", ["Ed Wood was a filmmaker.", " He made films."]],
            ["Scott", [" Scott is a director."]],
            ["Noise", ["Irrelevant text."]],
        ],
    ),
    _q(
        "a2",
        "Which?",
        [["Ed Wood", 0]],
        [
            ["Ed Wood", ["Ed Wood was a filmmaker.", " He made films."]],  # same title, same text: one doc
            ["Noise", ["A different noise paragraph."]],  # same title, other text: conflict
            ["Blank", ["  "]],
        ],
        "comparison",
    ),  # empty: quarantined
]


def test_tiny_file(con, tmp_path):
    path = tmp_path / "hp.json"
    path.write_text(json.dumps(RECORDS))
    summary = load_hotpotqa(con, path)
    assert (summary["documents"], summary["queries"], summary["qrels"], summary["quarantined"]) == (3, 2, 3, 2)
    docs = con.execute("SELECT doc_id, text, split FROM documents ORDER BY doc_id").fetchall()
    assert docs == [
        ("hotpotqa/Ed Wood", "Ed Wood\n\nEd Wood was a filmmaker. He made films.", "dev"),
        ("hotpotqa/Noise", "Noise\n\nIrrelevant text.", "dev"),
        ("hotpotqa/Scott", "Scott\n\nScott is a director.", "dev"),
    ]
    for text, s, e in con.execute(
        "SELECT text, char_start, char_end FROM paragraphs JOIN documents USING (doc_id)"
    ).fetchall():
        assert text[s:e] == text.split("\n\n", 1)[1]
    assert con.execute("SELECT query_id, text, query_type FROM queries ORDER BY 1").fetchall() == [
        ("hotpotqa/a1", "Who?", "bridge"),
        ("hotpotqa/a2", "Which?", "comparison"),
    ]
    assert con.execute("SELECT * FROM qrels ORDER BY ALL").fetchall() == [
        ("hotpotqa/a1", "hotpotqa/Ed Wood", 1),
        ("hotpotqa/a1", "hotpotqa/Scott", 1),
        ("hotpotqa/a2", "hotpotqa/Ed Wood", 1),
    ]
    funnel = {(s, r): n for _, s, r, n in con.execute("SELECT * FROM funnel").fetchall()}
    assert funnel == {
        ("hotpotqa_questions", "input"): 2,
        ("hotpotqa_questions", "beyond_limit"): 0,
        ("hotpotqa_questions", "kept"): 2,
        ("hotpotqa_paragraphs", "input"): 6,
        ("hotpotqa_paragraphs", "kept"): 3,
        ("hotpotqa_paragraphs", "duplicate"): 1,
        ("hotpotqa_paragraphs", "conflicting_title"): 1,
        ("hotpotqa_paragraphs", "empty_text"): 1,
    }
    assert sorted(r[0] for r in con.execute("SELECT record_id FROM quarantine").fetchall()) == [
        "Blank (question a2)",
        "Noise (question a2)",
    ]
    assert con.execute("SELECT * FROM query_answers ORDER BY 1").fetchall() == [
        ("hotpotqa/a1", 0, "a"),
        ("hotpotqa/a2", 0, "a"),
    ]
    # the question's level: a label the loader knows (contrasts are sliced by it)
    assert con.execute("SELECT entity, id, label, value, origin FROM labels ORDER BY id").fetchall() == [
        ("queries", "hotpotqa/a1", "hotpotqa_level", "hard", "loader"),
        ("queries", "hotpotqa/a2", "hotpotqa_level", "hard", "loader"),
    ]
    limited = load_hotpotqa(con, path, limit=1)
    assert (limited["documents"], limited["queries"], limited["funnel"]["hotpotqa_questions"]["beyond_limit"]) == (
        3,
        1,
        1,
    )


@pytest.mark.parametrize(
    "content, message",
    [
        ("[" + json.dumps(RECORDS[0]) + ",\n  oops]", r"hp.json, record line 2: invalid JSON"),  # streamed: line named
        (
            "[" + json.dumps(RECORDS[0]) + "\n" + json.dumps(RECORDS[1]) + "]",
            r"record line 2: invalid JSON: expected ','",
        ),
        (
            json.dumps(
                [
                    RECORDS[0],
                    {
                        "_id": "b",
                        "question": "q",
                        "type": "bridge",
                        "answer": "a",
                        "context": [["T", "not a list"]],
                        "supporting_facts": [],
                    },
                ]
            ),
            r"record 1 \(_id 'b'\): 'context' must be",
        ),
        (
            json.dumps([{k: v for k, v in RECORDS[0].items() if k != "answer"}]),
            r"record 0 \(_id 'a1'\): missing .* 'answer'",
        ),
        (json.dumps(RECORDS) + " trailing", r"text after the closing"),
        (
            json.dumps([_q("c", "q", [["Missing", 0]], [["T", ["t"]]])]),
            r"record 0 \(_id 'c'\): supporting-fact titles \['Missing'\]",
        ),
        (json.dumps([RECORDS[0], RECORDS[0]]), r"record 1 \(_id 'a1'\): duplicate _id"),
        (json.dumps({"not": "a list"}), "expected a JSON list"),
    ],
)
def test_bad_input(con, tmp_path, content, message):
    path = tmp_path / "hp.json"
    path.write_text(content)
    with pytest.raises(IngestError, match=message):
        load_hotpotqa(con, path)
    assert con.execute("SELECT count(*) FROM documents").fetchall()[0][0] == 0


def test_real_hotpotqa(con, shared_data):
    summary = load_hotpotqa(con, shared_data / "hotpotqa" / "hotpot_dev_distractor_v1_shared.json")
    # PROVENANCE.md: 300 questions, 2,976 context paragraphs; 2,969 distinct titles, none conflicting
    assert (summary["queries"], summary["documents"]) == (300, 2969)
    assert summary["funnel"]["hotpotqa_paragraphs"] == {"input": 2976, "kept": 2969, "duplicate": 7}
    n_pairs = con.execute("SELECT count(*), count(DISTINCT query_id) FROM qrels").fetchall()[0]
    assert n_pairs == (600, 300)  # every question has exactly two supporting titles


def test_train_file_streamed_with_limit_and_answers(con, tmp_path, monkeypatch):
    """The train file is read as a stream: records past the limit are counted, never kept; tiny read
    blocks force every element to be decoded across refills."""
    import ingest.corpora.json_stream as stream

    monkeypatch.setattr(stream, "BLOCK", 7)
    records = [
        _q(
            f"t{i}",
            f"Question {i}?",
            [[f"Gold {i}", 0]],
            [[f"Gold {i}", [f"Gold text {i}."]], ["Shared", ["Shared distractor."]]],
        )
        for i in range(6)
    ]
    for i, r in enumerate(records):
        r["answer"] = f"answer {i}"
    path = tmp_path / "hotpot_train_v1.1.json"
    path.write_text(json.dumps(records, indent=1))
    summary = load_hotpotqa(con, path, limit=4, split="train")
    assert summary["funnel"]["hotpotqa_questions"] == {"input": 6, "beyond_limit": 2, "kept": 4}
    assert (summary["queries"], summary["documents"]) == (4, 5)  # 4 gold paragraphs + 1 shared
    assert con.execute("SELECT DISTINCT split FROM documents").fetchall() == [("train",)]
    assert con.execute("SELECT answer FROM query_answers ORDER BY query_id").fetchall() == [
        (f"answer {i}",) for i in range(4)
    ]


def test_non_utf8_names_file_and_line(con, tmp_path):
    """The error used to be Python's bare UnicodeDecodeError (no file, no line)."""
    path = tmp_path / "hp.json"
    path.write_bytes(
        json.dumps(RECORDS, indent=1).replace("Scott is", "Sc\\u00f6tt is").encode().replace(b"\\u00f6", b"\xf6")
    )
    line = path.read_bytes()[: path.read_bytes().index(b"\xf6")].count(b"\n") + 1
    with pytest.raises(IngestError, match=rf"hp.json, record line {line}: byte 0xf6 at offset \d+ is not valid UTF-8"):
        load_hotpotqa(con, path)
    assert con.execute("SELECT count(*) FROM documents").fetchall()[0][0] == 0
