"""Runs brought in by ``ragwh import run``: never replaced by the pipeline (a name it stores its own runs under
is refused at import; a run whose systems would write over an imported run is refused before any work), and
a run file that is not UTF-8 is one line naming the file and line."""

from __future__ import annotations

import duckdb
import pytest

from tests.reliability.cli import one_line, ragwh
from tests.reliability.compare import warehouse_differences

CONDITION = "A3"


def run_lines(warehouse, depth: int = 2, queries: int = 3) -> list[str]:
    """TREC lines ranking the first ``depth`` A3 chunks of the demo for its first ``queries`` queries."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        query_ids = [
            q
            for (q,) in con.execute(
                "SELECT query_id FROM queries WHERE corpus = 'demo' ORDER BY 1 LIMIT ?", [queries]
            ).fetchall()
        ]
        chunk_ids = [
            c
            for (c,) in con.execute(
                "SELECT chunk_id FROM int_condition_texts WHERE corpus = 'demo' AND condition = ? ORDER BY 1 LIMIT ?",
                [CONDITION, depth],
            ).fetchall()
        ]
    return [f"{q} Q0 {c} {r} {10.0 - r} outside" for q in query_ids for r, c in enumerate(chunk_ids, start=1)]


@pytest.mark.parametrize("name", ["all-MiniLM-L6-v2", "BAAI/bge-small-en-v1.5", "bm25", "hash-standin-384"])
def test_a_name_the_pipeline_writes_is_refused_at_import(name, clean_demo, copy_of, tmp_path):
    path = copy_of(clean_demo)
    run = tmp_path / "outside.run"
    run.write_text("\n".join(run_lines(path)) + "\n", encoding="utf-8")
    result = ragwh("import", "run", run, "--name", name, "--condition", CONDITION, "--warehouse", path)
    assert result.exit_code == 1
    assert one_line(result) == (
        f"import failed (nothing written): {run}: run name {name!r} is reserved: `ragwh run` "
        f"stores its own {name} runs under it and would replace this one; choose another "
        f"--name (e.g. {name}-imported)"
    )
    assert warehouse_differences(clean_demo, path) == {}


def test_a_run_never_writes_over_an_imported_run(clean_demo, copy_of, tmp_path):
    """A warehouse where an imported run holds the name the demo's dense embedder is stored under (an older
    ragwh let ``--name all-MiniLM-L6-v2`` through): ``ragwh run`` stops before any stage, nothing changes."""
    path = copy_of(clean_demo)
    with duckdb.connect(str(path)) as con:
        (name,) = con.execute("SELECT DISTINCT embedder FROM run_manifest").fetchone()
        con.execute(
            "UPDATE run_manifest SET system_kind = 'imported', system_params = '{\"file\": \"x.run\"}' "
            "WHERE condition = ?",
            [CONDITION],
        )
    before = tmp_path / "before.duckdb"
    before.write_bytes(path.read_bytes())
    result = ragwh("run", "--warehouse", path, "--report", tmp_path / "r.html")
    assert result.exit_code == 1, result.output
    last = result.output.strip().splitlines()[-1]
    assert (
        last.startswith("run failed: ")
        and f"system {name!r} of corpus demo holds an imported run (from x.run) "
        "that this run would replace: re-import it under another name"
        in last
    ), result.output
    assert "Traceback" not in result.output and "> ingest" not in result.output
    assert warehouse_differences(before, path) == {}
    with duckdb.connect(str(path), read_only=True) as con:
        assert (
            con.execute("SELECT count(*) FROM experiments").fetchone()
            == duckdb.connect(str(clean_demo), read_only=True).execute("SELECT count(*) FROM experiments").fetchone()
        )


def test_a_run_file_that_is_not_utf8_is_one_line(clean_demo, copy_of, tmp_path):
    path = copy_of(clean_demo)
    lines = run_lines(path)
    run = tmp_path / "latin1.run"
    run.write_bytes(
        ("\n".join(lines[:2]) + "\n").encode() + lines[2].replace("outside", "caf\xe9").encode("latin-1") + b"\n"
    )
    result = ragwh("import", "run", run, "--name", "outside", "--condition", CONDITION, "--warehouse", path)
    assert result.exit_code == 1
    column = len(lines[2].replace("outside", "caf")) + 1
    assert one_line(result) == (
        f"import failed (nothing written): {run}:3: not UTF-8 text (byte 0xe9 at column "
        f"{column}): save the run file as UTF-8 (ids as `ragwh export corpus` writes them)"
    )
    assert warehouse_differences(clean_demo, path) == {}


def test_an_imported_run_shorter_than_a_cutoff_is_scored_and_flagged(clean_demo, copy_of, tmp_path):
    """A 2-deep imported run gets R@50 as trec_eval would (scored as submitted), listed in ``shallow_runs`` and in
    the report; the dense runs, retrieved 50 deep, are not listed (a run we retrieve too shallow fails the build)."""
    path = copy_of(clean_demo)
    run = tmp_path / "outside.run"
    # one query ranked 12 deep, two 2 deep: the run's depth (its deepest list) passes the @10 cutoffs, two of its
    # queries do not
    deep = run_lines(path, depth=12, queries=1)
    shallow = [line for line in run_lines(path, depth=2, queries=3) if line.split()[0] != deep[0].split()[0]]
    run.write_text("\n".join(deep + shallow) + "\n", encoding="utf-8")
    assert (
        ragwh("import", "run", run, "--name", "outside", "--condition", CONDITION, "--warehouse", path).exit_code == 0
    )
    report = tmp_path / "report.html"
    result = ragwh("run", "--warehouse", path, "--report", report)
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(path), read_only=True) as con:
        flagged = con.execute(
            "SELECT embedder, condition, metric, system_kind, cutoff, run_depth, n_queries, n_short "
            "FROM shallow_runs ORDER BY metric"
        ).fetchall()
        scored = con.execute(
            "SELECT count(*) FROM condition_means WHERE embedder = 'outside' AND metric = 'R@50'"
        ).fetchone()[0]
    assert 10 < len(deep) < 50  # the deep list passes the @10 cutoffs, not R@50 (the demo's A3 has 11 chunks)
    assert flagged == [
        ("outside", CONDITION, "R@50", "imported", 50, len(deep), 3, 3),
        ("outside", CONDITION, "cov-nDCG@10", "imported", 10, len(deep), 3, 2),
        ("outside", CONDITION, "nDCG@10", "imported", 10, len(deep), 3, 2),
    ]
    assert scored == 1
    page = report.read_text(encoding="utf-8")
    assert "Metrics cut deeper than the run" in page and "trec_eval" in page


def test_a_single_retrieve_never_writes_over_an_imported_run(clean_demo, copy_of):
    """``ragwh retrieve`` (outside ``ragwh run``) under an imported run's name: refused in one line, nothing written."""
    path = copy_of(clean_demo)
    with duckdb.connect(str(path)) as con:
        (name,) = con.execute("SELECT DISTINCT embedder FROM run_manifest").fetchone()
        con.execute(
            "UPDATE run_manifest SET system_kind = 'imported', fingerprint = 'imported:0' WHERE condition = ?",
            [CONDITION],
        )
        before = con.execute(
            "SELECT count(*), sum(hash(chunk_id, rank)) FROM runs WHERE condition = ?", [CONDITION]
        ).fetchone()
    result = ragwh("retrieve", "--embedder", name, "--condition", CONDITION, "--warehouse", path)
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines()[-1] == (
        f"retrieve failed: demo/{CONDITION}: system {name!r} holds an imported run (`ragwh import run`) that this dense "
        "run would replace: re-import it under another --name first"
    )
    with duckdb.connect(str(path), read_only=True) as con:
        assert (
            con.execute(
                "SELECT count(*), sum(hash(chunk_id, rank)) FROM runs WHERE condition = ?", [CONDITION]
            ).fetchone()
            == before
        )
        assert con.execute(
            "SELECT DISTINCT system_kind FROM run_manifest WHERE condition = ?", [CONDITION]
        ).fetchall() == [("imported",)]


def test_re_chunking_never_deletes_an_imported_run(clean_demo, copy_of, tmp_path):
    """A change that removes chunks deletes the runs ranking them so that retrieval recomputes them; an imported run
    cannot be recomputed, so the change is refused in one line naming the run and nothing is deleted."""
    from warehouse.db import WarehouseError, connect, purge_dangling_runs, transaction

    path = copy_of(clean_demo)
    run = tmp_path / "outside.run"
    run.write_text("\n".join(run_lines(path)) + "\n", encoding="utf-8")
    assert (
        ragwh("import", "run", run, "--name", "outside", "--condition", CONDITION, "--warehouse", path).exit_code == 0
    )
    before = tmp_path / "before.duckdb"
    before.write_bytes(path.read_bytes())
    con = connect(path)
    try:
        with pytest.raises(WarehouseError) as info:
            with transaction(con):  # what a re-chunking does: its chunks replaced, then the stale runs purged
                con.execute(
                    "DELETE FROM chunks WHERE chunk_id IN (SELECT chunk_id FROM runs WHERE embedder = 'outside')"
                )
                purge_dangling_runs(con)
        assert "\n" not in str(info.value)
        assert str(info.value).startswith(
            f"imported run 'outside' (demo, condition {CONDITION}, from {run}) ranks "
            "chunks that this change removes: nothing was changed"
        )
    finally:
        con.close()
    assert warehouse_differences(before, path) == {}
