"""EnterpriseRAG-Bench loader: the real shared questions over a small corpus written here (the shared
data has no documents), in the export's three document forms; missing corpus refused."""

from __future__ import annotations

import json

import pytest

from ingest.corpora.enterprise_rag import load_enterprise_rag
from ingest.errors import IngestError


def _questions(shared_data):
    path = shared_data / "enterprise_rag" / "questions.jsonl"
    return path, [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_corpus(root, gold: list[str]) -> None:
    """Three gold documents, one per export form, a near-duplicate of the first, a distractor and noise."""
    (root / "github").mkdir(parents=True)
    (root / "github" / f"{gold[0]}__pr-1-multipart-limits.txt").write_text(
        "Multipart upload limits\n\nThe default limit is 10 MiB per file.\nTotal request size is 50 MiB.\n"
    )
    (root / "gmail" / "rafael").mkdir(parents=True)
    (root / "gmail" / "rafael" / f"{gold[0]}__20280503-copy.txt").write_text(
        "Multipart upload limits\n\nResent copy.\n"
    )
    (root / "linear").mkdir()
    (root / "linear" / "eng-1.json").write_text(
        json.dumps(
            {
                "title": "Stream timebox metric",
                "description": "Adds stream.timebox_finalized.",
                "comments": ["ok", "merged"],
                "title_field_name": "title",
                "content_field_names": ["description", "comments"],
                "dataset_doc_uuid": gold[1],
            }
        )
    )
    (root / "linear" / "project.json").write_text(json.dumps({"name": "not a document"}))
    (root / "agents.md").write_text("notes")
    (root / "slice").mkdir()
    (root / "slice" / "corpus.jsonl").write_text(
        json.dumps({"_id": gold[2], "title": "Acceptance criteria", "text": "The criteria are A and B."})
        + "\n"
        + json.dumps({"_id": "dsid_" + "0" * 32, "title": "Distractor", "text": "Unrelated chat."})
        + "\n"
    )


def test_shared_questions_over_a_small_corpus(con, shared_data, tmp_path):
    path, questions = _questions(shared_data)
    gold = [q["expected_doc_ids"][0] for q in questions[:3]]
    _write_corpus(tmp_path / "export", gold)
    summary = load_enterprise_rag(con, path, tmp_path / "export")
    funnel = summary["funnel"]
    n_expected = sum(len(set(q["expected_doc_ids"])) for q in questions)
    answerable = [q for q in questions if q["expected_doc_ids"]]
    judged = [q for q in answerable if set(q["expected_doc_ids"]) & set(gold)]
    assert funnel["erb_documents"] == {"input": 5, "merged_same_id": 1, "not_a_document": 2, "kept": 4}
    assert funnel["erb_questions"] == {
        "input": 359,
        "unanswerable": 30,
        "no_judged_document": len(answerable) - len(judged),
        "kept": len(judged),
    }
    assert funnel["erb_qrels"]["input"] == n_expected and funnel["erb_qrels"]["kept"] == summary["qrels"]
    assert funnel["erb_qrels"]["missing_doc"] == n_expected - summary["qrels"]  # every missing doc counted ...
    assert (
        con.execute("SELECT count(*) FROM quarantine WHERE stage = 'erb_qrels'").fetchone()[0]
        == funnel["erb_qrels"]["missing_doc"]
    )  # ... and quarantined with its question
    docs = dict(con.execute("SELECT doc_id, text FROM documents").fetchall())
    assert docs[f"enterprise_rag/{gold[0]}"] == (
        "Multipart upload limits\n\nThe default limit is 10 MiB per file.\n"
        "Total request size is 50 MiB.\n\nResent copy."
    )
    assert docs[f"enterprise_rag/{gold[1]}"] == "Stream timebox metric\n\nAdds stream.timebox_finalized.\nok\nmerged"
    assert docs[f"enterprise_rag/{gold[2]}"] == "Acceptance criteria\n\nThe criteria are A and B."
    q1 = con.execute(
        "SELECT q.text, q.query_type, a.answer FROM queries q JOIN query_answers a USING (query_id) "
        "WHERE query_id = 'enterprise_rag/qst_0001'"
    ).fetchall()
    assert q1 == [(questions[0]["question"], questions[0]["question_type"], questions[0]["gold_answer"])]
    assert con.execute("SELECT doc_id FROM qrels WHERE query_id = 'enterprise_rag/qst_0001'").fetchall() == [
        (f"enterprise_rag/{gold[0]}",)
    ]
    # the question's source types: a label the loader knows (contrasts are sliced by it)
    assert con.execute(
        "SELECT value, origin FROM labels WHERE label = 'erb_source' AND id = 'enterprise_rag/qst_0001'"
    ).fetchall() == [("+".join(sorted(set(questions[0]["source_types"]))), "loader")]
    assert con.execute("SELECT count(*) FROM labels").fetchone()[0] == summary["queries"]


def test_missing_corpus_is_refused_and_changes_nothing(con, shared_data):
    path, _ = _questions(shared_data)
    for documents in (None, shared_data / "enterprise_rag", shared_data / "enterprise_rag" / "nowhere"):
        with pytest.raises(IngestError, match="no EnterpriseRAG-Bench documents.*--documents"):
            load_enterprise_rag(con, path, documents)
    assert con.execute("SELECT count(*) FROM queries").fetchone()[0] == 0


@pytest.mark.parametrize(
    "line, message",
    [
        (
            '{"question_id": "q1", "question": "?", "question_type": "basic", "expected_doc_ids": "dsid_x"}',
            "line 1: 'expected_doc_ids' must be a list",
        ),
        (
            '{"question_id": "q1", "question_type": "basic", "expected_doc_ids": []}',
            r"line 1: missing or non-string field\(s\) \['question'\]",
        ),
        ("not json", "line 1: invalid JSON"),
    ],
)
def test_bad_questions(con, tmp_path, line, message):
    _write_corpus(tmp_path / "export", ["dsid_" + c * 32 for c in "abc"])
    (tmp_path / "questions.jsonl").write_text(line + "\n")
    with pytest.raises(IngestError, match=message):
        load_enterprise_rag(con, tmp_path / "questions.jsonl", tmp_path / "export")


def test_cli_refuses_without_documents(shared_data, warehouse_file):
    from typer.testing import CliRunner

    from ragwh.cli import app

    result = CliRunner().invoke(
        app, ["ingest", "enterprise-rag", str(shared_data / "enterprise_rag" / "questions.jsonl")]
    )
    assert result.exit_code == 1
    assert "warehouse unchanged" in result.output and "--documents" in result.output
