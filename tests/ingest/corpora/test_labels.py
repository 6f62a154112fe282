"""`ragwh label add` (ingest/corpora/labels.py): analyst labels into table labels, with the usual rules — unknown ids
named with their line and nothing written, a label added again replaces it, built-in names refused."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from ingest.corpora.labels import LabelError, add_labels, builtin_labels
from ragwh.cli import app


@pytest.fixture()
def loaded(con):
    con.execute(
        "insert into documents values ('c/d1', 'c', 't', 'text', null, null, 'f'), "
        "('c/d2', 'c', 't', 'text', null, null, 'f')"
    )
    con.execute(
        "insert into queries values ('c/q1', 'c/d1', 'c', 'q?', 'extractive'), ('c/q2', 'c/d2', 'c', 'q?', 'boolean')"
    )
    return con


def _labels(con):
    return con.execute("select entity, id, label, value, origin from labels order by all").fetchall()


def test_add_then_replace(loaded, tmp_path):
    f = tmp_path / "grades.csv"
    f.write_text("query_id,difficulty,topic\nc/q1,hard,physics\nc/q2,easy,\n")
    added = add_labels(loaded, f, "queries")
    assert (added.labels, added.n_ids, added.n_values, added.replaced) == (("difficulty", "topic"), 2, 3, ())
    assert _labels(loaded) == [
        ("queries", "c/q1", "difficulty", "hard", "analyst"),
        ("queries", "c/q1", "topic", "physics", "analyst"),
        ("queries", "c/q2", "difficulty", "easy", "analyst"),
    ]
    f.write_text("query_id,difficulty\nc/q2,medium\n")  # re-adding a label replaces all of it
    assert add_labels(loaded, f, "queries").replaced == ("difficulty",)
    assert _labels(loaded) == [
        ("queries", "c/q1", "topic", "physics", "analyst"),
        ("queries", "c/q2", "difficulty", "medium", "analyst"),
    ]


@pytest.mark.parametrize(
    "text, entity, message",
    [
        ("query_id,difficulty\nc/q1,hard\nc/q9,easy\n", "queries", r"grades.csv:3: unknown query_id 'c/q9'"),
        ("doc_id,venue\nc/q1,acl\n", "documents", r"grades.csv:2: unknown doc_id 'c/q1'"),
        (
            "query_id,difficulty\nc/q1,hard\nc/q1,easy\n",
            "queries",
            r":3: query_id 'c/q1' is given twice \(first on line 2\)",
        ),
        ("query_id,difficulty\nc/q1,hard,extra\n", "queries", r":2: expected 2 fields"),
        ("query_id,query_type\nc/q1,x\n", "queries", r":1: label 'query_type' is a built-in label"),
        ("query_id,a,a\nc/q1,x,y\n", "queries", r":1: label 'a' is given twice"),
        ("query_id\nc/q1\n", "queries", r":1: the header needs the id column"),
        ("", "queries", r"the file is empty"),
        ("query_id,difficulty\n", "queries", r"holds no labelled id"),
    ],
)
def test_bad_files_write_nothing(loaded, tmp_path, text, entity, message):
    add_labels(loaded, _write(tmp_path / "before.csv", "query_id,kept\nc/q1,yes\n"), "queries")
    before = _labels(loaded)
    with pytest.raises(LabelError, match=message):
        add_labels(loaded, _write(tmp_path / "grades.csv", text), entity)
    assert _labels(loaded) == before


def test_a_label_of_the_other_entity_is_refused(loaded, tmp_path):
    add_labels(loaded, _write(tmp_path / "v.csv", "doc_id,venue\nc/d1,acl\n"), "documents")
    with pytest.raises(LabelError, match="already a label of the other entity"):
        add_labels(loaded, _write(tmp_path / "q.csv", "query_id,venue\nc/q1,acl\n"), "queries")


def test_builtin_labels_come_from_the_seed():
    assert {"query_type", "topic_bucket", "doc_length", "gold_depth"} <= set(builtin_labels())


def test_cli(loaded, tmp_path, warehouse_file):
    loaded.close()
    ok = CliRunner().invoke(
        app,
        ["label", "add", str(_write(tmp_path / "v.csv", "doc_id,venue\nc/d1,acl\nc/d2,arxiv\n")), "--on", "documents"],
    )
    assert ok.exit_code == 0, ok.output
    assert "venue on documents: 2 values over 2 ids" in ok.output
    bad = CliRunner().invoke(
        app, ["label", "add", str(_write(tmp_path / "b.csv", "doc_id,venue\nc/d7,acl\n")), "--on", "documents"]
    )
    assert bad.exit_code == 1 and "nothing written" in bad.output and "b.csv:2: unknown doc_id 'c/d7'" in bad.output


def _write(path, text):
    path.write_text(text)
    return path
