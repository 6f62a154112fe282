"""AmbigNQ loader: real shared questions, hand-made passages (none are available), answer-match qrels."""

from __future__ import annotations

import json

import pytest

from ingest.corpora.ambignq import load_ambignq
from ingest.errors import IngestError
from udfs.metrics.squad import contains_answer, normalize_answer

QUESTIONS = [
    {
        "id": "1",
        "question": "Who plays the doctor in dexter season 1?",
        "annotations": [{"type": "singleAnswer", "answer": ["Tony Goldwyn", "Goldwyn"]}],
    },
    {
        "id": "2",
        "question": "When did the eiffel tower open?",
        "annotations": [
            {
                "type": "multipleQAs",
                "qaPairs": [
                    {"question": "When did it open to the public?", "answer": ["31 March 1889"]},
                    {"question": "When was it inaugurated?", "answer": ["The 31st of March, 1889", "31 March 1889"]},
                ],
            },
            {"type": "singleAnswer", "answer": ["1889"]},
        ],
    },
    {"id": "3", "question": "Who won?", "annotations": [{"type": "singleAnswer", "answer": ["Nobody Here"]}]},
]
PASSAGES = [
    {"_id": "p1", "title": "Dexter", "text": "In season 1, Dr. Goldwyn (played by TONY GOLDWYN) treats Dexter."},
    {"_id": "p2", "title": "Eiffel Tower", "text": "The tower opened on 31 March 1889, after two years."},
    {"_id": "p3", "title": "Paris", "text": "Built for the 1889 World's Fair."},
    {"_id": "p4", "title": "Goldwyn", "text": "Samuel Goldwynson founded a studio."},  # 'goldwyn' not a whole token
    {"_id": "p5", "title": "Empty", "text": "   "},
]


def _files(tmp_path, questions=QUESTIONS, passages=PASSAGES):
    q = tmp_path / "ambignq.json"
    q.write_text(json.dumps(questions))
    (tmp_path / "passages").mkdir()
    (tmp_path / "passages" / "corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    return q, tmp_path / "passages"


def test_normalization_is_squads():
    assert normalize_answer("The  Eiffel-Tower!") == "eiffeltower"
    assert normalize_answer("A Tale of Two Cities") == "tale of two cities"
    assert contains_answer(normalize_answer("They met in New York City."), normalize_answer("new york"))
    assert not contains_answer(normalize_answer("Newark"), normalize_answer("New"))
    assert not contains_answer("anything", "")


def test_answer_match_qrels_and_answers(con, tmp_path):
    q, p = _files(tmp_path)
    summary = load_ambignq(con, q, p)
    assert con.execute("SELECT * FROM qrels ORDER BY ALL").fetchall() == [
        ("ambignq/1", "ambignq/p1", 1),  # 'tony goldwyn' after normalization
        ("ambignq/2", "ambignq/p2", 1),
        ("ambignq/2", "ambignq/p3", 1),
    ]  # '31 march 1889' and '1889'
    assert con.execute("SELECT query_id, query_type FROM queries ORDER BY 1").fetchall() == [
        ("ambignq/1", "single"),
        ("ambignq/2", "ambiguous"),
    ]
    assert con.execute(
        "SELECT answer FROM query_answers WHERE query_id = 'ambignq/2' ORDER BY answer_idx"
    ).fetchall() == [
        ("31 March 1889",),
        ("The 31st of March, 1889",),
        ("1889",),
    ]  # every alias of every annotation, deduplicated
    assert summary["funnel"]["ambignq_questions"] == {"input": 3, "no_relevant_passage": 1, "kept": 2}
    assert summary["funnel"]["ambignq_passages"] == {"input": 5, "empty_text": 1, "kept": 4}


def test_real_shared_questions_on_fixture_passages(con, shared_data, tmp_path):
    questions = json.loads((shared_data / "ambignq" / "ambignq_dev_light_shared.json").read_text())
    first = questions[0]  # "Who plays the doctor in dexter season 1?" -> Tony Goldwyn
    _, p = _files(tmp_path, questions=[], passages=PASSAGES)
    summary = load_ambignq(con, shared_data / "ambignq" / "ambignq_dev_light_shared.json", p)
    assert summary["funnel"]["ambignq_questions"]["input"] == 1001
    judged = dict(con.execute("SELECT query_id, count(*) FROM qrels GROUP BY 1").fetchall())
    assert judged[f"ambignq/{first['id']}"] == 1
    assert summary["queries"] == len(judged)  # only questions with a relevant passage are loaded


def test_missing_passages_refused(con, shared_data, tmp_path):
    questions = shared_data / "ambignq" / "ambignq_dev_light_shared.json"
    for passages in (None, tmp_path / "nowhere.jsonl", shared_data / "ambignq"):
        with pytest.raises(IngestError, match="no passages|passages file not found"):
            load_ambignq(con, questions, passages)
    assert con.execute("SELECT count(*) FROM queries").fetchone()[0] == 0


@pytest.mark.parametrize(
    "record, message",
    [
        ({"id": "x", "question": "q", "annotations": [{"type": "weird"}]}, "annotation type 'weird'"),
        (
            {"id": "x", "question": "q", "annotations": [{"type": "singleAnswer", "answer": "no list"}]},
            "list of strings",
        ),
        ({"question": "q", "annotations": []}, "string 'id' and 'question'"),
    ],
)
def test_bad_records(con, tmp_path, record, message):
    q, p = _files(tmp_path, questions=[record])
    with pytest.raises(IngestError, match=message):
        load_ambignq(con, q, p)
