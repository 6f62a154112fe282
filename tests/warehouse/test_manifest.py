"""Stage fingerprints: a stage runs once per distinct input and is skipped (and says so) otherwise."""

from __future__ import annotations

import io

from rich.console import Console

from ragwh.experiment.config.chunking import load_config
from ragwh.experiment.pipeline.chunking import Pipeline, PipelineError
from warehouse import manifest


def test_table_digest_sees_every_change(con):
    empty = manifest.table_digest(con, "qrels")
    con.execute("INSERT INTO qrels VALUES ('q/1', 'd/1', 1), ('q/2', 'd/2', 1)")
    two = manifest.table_digest(con, "qrels")
    assert empty == "0:0" and two.startswith("2:")
    con.execute("UPDATE qrels SET relevance = 2 WHERE query_id = 'q/2'")
    assert manifest.table_digest(con, "qrels") not in (empty, two)
    assert manifest.table_digest(con, "qrels", "query_id = ?", ["q/1"]).startswith("1:")
    assert manifest.table_digest(con, "no_such_model") == "absent"


def test_sha256_parts_separates_parts():
    assert manifest.sha256_parts(["ab", "c"]) != manifest.sha256_parts(["a", "bc"])


def test_stage_runs_once_then_skips_until_inputs_change(warehouse_file):
    out = io.StringIO()
    pipeline = Pipeline(load_config(None), data=None, warehouse=warehouse_file, console=Console(file=out, width=200))
    calls = []

    def work() -> str:
        calls.append(1)
        return "did it"

    try:
        first = pipeline.stage("embed", "demo|m", ["input-1"], work)
        again = pipeline.stage("embed", "demo|m", ["input-1"], work)
        changed = pipeline.stage("embed", "demo|m", ["input-2"], work)
        other_scope = pipeline.stage("embed", "demo|n", ["input-2"], work)
        forced = pipeline.stage("embed", "demo|n", ["input-2"], work, force=True)
    finally:
        pipeline.close()
    assert first == again != changed and forced == other_scope and len(calls) == 4
    assert [s.status for s in pipeline.outcome.stages] == ["ran", "skipped", "ran", "ran", "ran"]
    assert "embed [demo|m]: unchanged, skipped" in out.getvalue()
    assert changed != other_scope


def test_failed_stage_names_itself_and_records_nothing(warehouse_file):
    pipeline = Pipeline(load_config(None), data=None, warehouse=warehouse_file, console=Console(file=io.StringIO()))

    def boom() -> str:
        raise ValueError("model exploded")

    try:
        try:
            pipeline.stage("retrieve", "demo|m", ["x"], boom)
        except PipelineError as exc:
            assert "stage retrieve [demo|m] failed: ValueError: model exploded" in str(exc)
        else:
            raise AssertionError("no error")
        assert manifest.stored_fingerprint(pipeline.con, "retrieve", "demo|m") is None
    finally:
        pipeline.close()


def test_not_run_reasons_cover_a1_and_its_contrast(warehouse_file):
    pipeline = Pipeline(load_config(None), data=None, warehouse=warehouse_file, console=Console(file=io.StringIO()))
    runnable, skipped = pipeline.config.runnable_conditions()
    pipeline.not_run_reasons(runnable, skipped)
    assert "no LLM backend" in pipeline.outcome.not_run["A1"]
    assert "A1 not run" in pipeline.outcome.not_run["C1"]
    assert set(pipeline.outcome.not_run) == {"A1", "C1", "DOC"}


def test_stage_reruns_when_its_output_changed_in_the_warehouse(warehouse_file):
    """Equal input fingerprints used to skip a stage whatever had happened to
    its output since (a corpus wiped or replaced by hand); now the output digest must match too."""
    from ragwh.experiment.pipeline.outputs import Output

    out = io.StringIO()
    pipeline = Pipeline(load_config(None), data=None, warehouse=warehouse_file, console=Console(file=out, width=200))
    outputs = [Output("qrels", "starts_with(query_id, ?)", ("demo/",))]
    calls = []

    def work() -> str:
        calls.append(1)
        pipeline.con.execute("DELETE FROM qrels WHERE starts_with(query_id, 'demo/')")
        pipeline.con.execute("INSERT INTO qrels VALUES ('demo/q1', 'demo/d1', 1)")
        return "loaded"

    try:
        pipeline.stage("ingest", "demo", ["file=abc"], work, outputs=outputs)
        pipeline.stage("ingest", "demo", ["file=abc"], work, outputs=outputs)  # unchanged: skipped
        pipeline.con.execute("INSERT INTO qrels VALUES ('other/q1', 'other/d1', 1)")  # outside the output
        pipeline.stage("ingest", "demo", ["file=abc"], work, outputs=outputs)  # still skipped
        pipeline.con.execute("UPDATE qrels SET relevance = 2 WHERE query_id = 'demo/q1'")  # edited by hand
        pipeline.stage("ingest", "demo", ["file=abc"], work, outputs=outputs)  # runs again
        pipeline.con.execute("DELETE FROM qrels WHERE query_id = 'demo/q1'")  # wiped by hand
        pipeline.stage("ingest", "demo", ["file=abc"], work, outputs=outputs)  # runs again
        pipeline.con.execute("UPDATE stage_manifest SET output_digest = NULL")  # an older warehouse's record
        pipeline.stage("ingest", "demo", ["file=abc"], work, outputs=outputs)  # runs again
    finally:
        pipeline.close()
    assert [s.status for s in pipeline.outcome.stages] == ["ran", "skipped", "skipped", "ran", "ran", "ran"]
    assert len(calls) == 4
    assert (
        out.getvalue().count(
            "ingest [demo]: inputs unchanged but its output in the warehouse changed since it ran: running it again"
        )
        == 3
    )
