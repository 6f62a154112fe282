"""``ragwh import run``: TREC runs validated line by line (nothing written on any error), ordered by score then
rank, stored as a system of their own; the CLI prints one line and exits 1 on a bad file."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ingest.retrieval.imported import ImportRunError, import_run
from ragwh.cli import app

CHUNKS = ["ch|c/a|0", "ch|c/a|1", "ch|c/a|2", "ch|c/b|0", "ch|c/b|10", "ch|c/b|2"]


@pytest.fixture()
def small(con):
    con.execute(
        "CREATE TABLE int_condition_texts (condition VARCHAR, corpus VARCHAR, chunk_id VARCHAR, doc_id VARCHAR, "
        "text VARCHAR, text_hash VARCHAR)"
    )
    con.executemany(
        "INSERT INTO int_condition_texts VALUES ('A3', 'c', ?, ?, 't', 'h')", [(c, c.split("|")[1]) for c in CHUNKS]
    )
    con.executemany("INSERT INTO queries VALUES (?, NULL, 'c', 'q', 'x')", [("c/q1",), ("c/q2",), ("c/q3",)])
    con.execute("INSERT INTO runs VALUES ('c', 'emb', 'none', 'A3', 'c/q1', 1, 'ch|c/a|0', 0.5)")
    return con


def _write(tmp_path, lines, name="x.run"):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _runs(con, name):
    return con.execute(
        "SELECT query_id, rank, chunk_id, score FROM runs WHERE embedder = ? ORDER BY query_id, rank", [name]
    ).fetchall()


def test_scores_order_then_ranks_then_tie_order(small, tmp_path):
    path = _write(
        tmp_path,
        [
            "c/q1 Q0 ch|c/a|1 5 0.20 sys",
            "c/q1 Q0 ch|c/a|0 9 0.90 sys",  # scores decide
            "c/q2 0 ch|c/b|10 1 0 sys",
            "c/q2 0 ch|c/b|2 2 0 sys",  # equal scores: the file's ranks decide
            "c/q2 0 ch|c/a|2 2 0 sys",  # equal score and rank: document, chunk number
        ],
    )
    result = import_run(small, path, "outside", "A3")
    assert (result.corpus, result.n_lines, result.n_queries, result.n_queries_without_run, result.k) == (
        "c",
        5,
        2,
        1,
        3,
    )
    assert _runs(small, "outside") == [
        ("c/q1", 1, "ch|c/a|0", 0.9),
        ("c/q1", 2, "ch|c/a|1", 0.2),
        ("c/q2", 1, "ch|c/b|10", 0.0),
        ("c/q2", 2, "ch|c/a|2", 0.0),
        ("c/q2", 3, "ch|c/b|2", 0.0),
    ]
    kind, params, k = small.execute(
        "SELECT system_kind, system_params, k FROM run_manifest WHERE embedder = 'outside'"
    ).fetchone()
    params = json.loads(params)
    assert (
        kind == "imported"
        and k == 3
        and params["lines"] == 5
        and params["tags"] == ["sys"]
        and len(params["sha256"]) == 64
    )
    # importing again replaces the run
    import_run(small, _write(tmp_path, ["c/q3 Q0 ch|c/a|0 1 1.5 sys"], "y.run"), "outside", "A3")
    assert _runs(small, "outside") == [("c/q3", 1, "ch|c/a|0", 1.5)]


@pytest.mark.parametrize(
    "line, message",
    [
        ("c/q1 Q0 ch|c/a|0 1 0.5", r"x.run:2: expected 6 fields"),
        ("c/q1 Q0 ch|c/a|9 1 0.5 t", r"x.run:2: unknown chunk id 'ch\|c/a\|9'"),
        ("c/q9 Q0 ch|c/a|1 1 0.5 t", r"x.run:2: unknown query id 'c/q9'"),
        ("c/q1 Q0 ch|c/a|1 one 0.5 t", r"x.run:2: rank 'one' is not an integer"),
        ("c/q1 Q0 ch|c/a|1 1 high t", r"x.run:2: score 'high' is not a number"),
        ("c/q1 Q0 ch|c/a|1 1 nan t", r"x.run:2: score 'nan' is not finite"),
        ("c/q2 Q0 ch|c/a|2 2 0.5 t", r"x.run:2: chunk 'ch\|c/a\|2' ranked twice for 'c/q2' \(first on line 1\)"),
    ],
)
def test_a_malformed_run_is_refused_with_nothing_written(small, tmp_path, line, message):
    before = small.execute("SELECT count(*), (SELECT count(*) FROM run_manifest) FROM runs").fetchone()
    path = _write(tmp_path, ["c/q2 Q0 ch|c/a|2 1 0.9 t", line])
    with pytest.raises(ImportRunError, match=message):
        import_run(small, path, "outside", "A3")
    assert small.execute("SELECT count(*), (SELECT count(*) FROM run_manifest) FROM runs").fetchone() == before


def test_names_and_conditions_are_checked(small, tmp_path):
    path = _write(tmp_path, ["c/q1 Q0 ch|c/a|0 1 0.5 t"])
    small.execute("INSERT INTO embeddings VALUES ('emb', 'h', [1.0])")
    with pytest.raises(ImportRunError, match="run name 'emb' is a dense system's"):
        import_run(small, path, "emb", "A3")
    with pytest.raises(ImportRunError, match="without spaces or '@'"):
        import_run(small, path, "x@bf16", "A3")
    with pytest.raises(ImportRunError, match="condition G3 indexes no texts"):
        import_run(small, path, "outside", "G3")
    with pytest.raises(ImportRunError, match="holds no line"):
        import_run(small, _write(tmp_path, [""], "empty.run"), "outside", "A3")


def test_cli_prints_one_line_and_writes_nothing(small, warehouse_file, tmp_path):
    small.close()
    bad = _write(tmp_path, ["c/q1 Q0 nope 1 0.5 t"])
    result = CliRunner().invoke(app, ["import", "run", str(bad), "--name", "outside", "--condition", "A3"])
    assert result.exit_code == 1
    assert "import failed (nothing written)" in result.output and "x.run:1: unknown chunk id 'nope'" in result.output
    good = _write(tmp_path, ["c/q1 Q0 ch|c/a|1 1 0.5 t"], "good.run")
    result = CliRunner().invoke(app, ["import", "run", str(good), "--name", "outside", "--condition", "A3"])
    assert result.exit_code == 0 and "imported outside: 1 lines, 1 queries of c" in result.output
