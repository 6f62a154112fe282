"""The warehouse knows which experiment it holds: the run's experiments row and settings, a report
that refuses another experiment's config, settings that a bare dbt invocation reads, data tests that
fail on a silent wrong cell, names as users type them, and one-line errors for files that are not
(current) warehouses. Everything reuses the session's clean demo run (copied before any write)."""

from __future__ import annotations

import json
import shutil
from importlib import metadata

import duckdb
import pytest

from ragwh.experiment.config.chunking import load_config
from ragwh.experiment.identity import CHUNKING_SETTINGS, config_hash
from tests.reliability.cli import one_line, ragwh
from warehouse.db import connect
from warehouse.dbt import DbtError, run_dbt
from warehouse.identity import read_settings
from warehouse.paths import PROJECT_ROOT
from warehouse.schema import SCHEMA_VERSION


@pytest.fixture()
def copy(clean_demo, tmp_path):
    path = tmp_path / "copy.duckdb"
    shutil.copy(clean_demo, path)
    return path


def _stored_embedder(path) -> str:
    con = duckdb.connect(str(path), read_only=True)
    try:
        ((name,),) = con.execute("SELECT DISTINCT embedder FROM runs").fetchall()
        return name
    finally:
        con.close()


def test_the_run_records_its_experiment_and_the_settings_of_its_marts(clean_demo):
    con = connect(clean_demo, read_only=True)
    try:
        cur = con.execute("SELECT * FROM experiments")
        (row,) = [dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()]
        settings = read_settings(con)
        version = con.execute("SELECT value FROM warehouse_meta WHERE key = 'schema_version'").fetchall()
    finally:
        con.close()
    assert version == [(str(SCHEMA_VERSION),)]
    assert (row["experiment_id"], row["name"], row["study"], row["status"]) == (1, "demo", "chunking", "finished")
    assert row["finished_at"] >= row["started_at"] and row["detail"] is None
    assert row["config_hash"] == config_hash(load_config(None)) and row["overrides_json"] == "{}"
    assert json.loads(row["config_json"])["bootstrap_b"] == 2000
    packages = json.loads(row["packages_json"])
    assert packages["duckdb"] == metadata.version("duckdb") and packages["dbt-core"] == metadata.version("dbt-core")
    embedder = _stored_embedder(clean_demo)
    computed = embedder.partition("@")[2] or "fp32"
    assert row["precision"] == f"auto -> {computed}" and row["device"].split(" ")[0] in ("cpu", "cuda")
    assert set(settings) == set(CHUNKING_SETTINGS)
    assert settings == {
        "inducer": "texttiling",
        "bootstrap_b": 2000,
        "bootstrap_seed": 20260710,
        "primary_metric": "cov-nDCG@10",
        "primary_embedder": embedder,
        "primary_reranker": "none",
        "k": 50,
        "declared_contrasts": [],
    }


def test_report_refuses_another_experiments_config_and_reports_its_own(clean_demo, tmp_path):
    out = tmp_path / "r.html"
    foreign = ragwh(
        "report", "--config", PROJECT_ROOT / "experiments" / "cpu.yml", "--warehouse", clean_demo, "--out", out
    )
    assert foreign.exit_code == 1 and not out.exists()
    assert "holds chunking experiment 'demo' (run #1" in one_line(foreign) and "not 'cpu'" in foreign.output
    tables = ragwh(
        "export",
        "tables",
        "--config",
        PROJECT_ROOT / "experiments" / "cpu.yml",
        "--warehouse",
        clean_demo,
        "--out",
        tmp_path / "tables",
    )
    assert tables.exit_code == 1 and "not 'cpu'" in one_line(tables) and not (tmp_path / "tables").exists()
    edited = tmp_path / "demo-b500.yml"  # same name, another bootstrap
    edited.write_text((PROJECT_ROOT / "experiments" / "default.yml").read_text().replace("B: 2000", "B: 500"))
    changed = ragwh("report", "--config", edited, "--warehouse", clean_demo, "--out", out)
    assert (
        changed.exit_code == 1
        and "differs from the config" in one_line(changed)
        and "(in bootstrap_b)" in changed.output
    )
    own = ragwh("report", "--warehouse", clean_demo, "--out", out)
    assert own.exit_code == 0, own.output
    page = out.read_text()
    assert "experiment <b>#1 demo (chunking)</b>" in page and "status <b>finished</b>" in page
    assert config_hash(load_config(None))[:12] in page and "DEMO NUMBERS, NOT RESULTS" in page


def test_a_bare_dbt_compile_reads_the_stored_settings_and_bare_model_names(copy, tmp_path):
    embedder = _stored_embedder(copy)
    bare = embedder.partition("@")[0]
    target = tmp_path / "target"
    # no primary_* or bootstrap_b passed: they come from experiment_settings; the seed is overridden
    run_dbt(
        "compile",
        copy,
        select="resource_type:analysis int_contrast_bootstrap",
        progress=False,
        vars={"bootstrap_seed": 7, "primary_embedder": bare},
        extra=["--target-path", str(target)],
    )
    compiled = target / "compiled" / "ragwarehouse"
    boot = (compiled / "models" / "intermediate" / "chunking" / "evaluation" / "int_contrast_bootstrap.sql").read_text()
    assert "cluster_bootstrap(deltas, clusters, 2000, 7)" in boot  # stored B, overridden seed
    con = duckdb.connect(str(copy), read_only=True)
    try:
        for name in ("contrast_deltas_by_query_type", "metric_cuts_by_query_type"):
            sql = (compiled / "analyses" / f"{name}.sql").read_text()
            assert f"'{embedder}'" in sql and con.execute(sql).fetchall(), name  # the bare name matched: rows
    finally:
        con.close()


def test_a_silent_wrong_cell_fails_the_build_with_the_reason(copy):
    con = duckdb.connect(str(copy))
    con.execute("UPDATE run_manifest SET k = 5 WHERE condition = 'A3'")
    con.close()
    with pytest.raises(DbtError) as err:
        run_dbt(
            "build",
            copy,
            select="int_contrast_bootstrap primary_cell_present run_depth_covers_cutoffs",
            vars={"primary_embedder": "BAAI/bge-large-en-v1.5"},
            progress=False,
        )
    message = str(err.value)
    assert "cov-nDCG@10 x BAAI/bge-large-en-v1.5 x reranker none matches none of the" in message
    assert f"embedders: {_stored_embedder(copy)}" in message
    assert "metric R@50 is cut deeper than run demo /" in message and "/ A3 was retrieved (k = 5;" in message


def test_bare_model_names_and_unknown_corpora_or_conditions(copy, tmp_path):
    bare = _stored_embedder(copy).partition("@")[0]
    ok = ragwh("export", "trec", "--condition", "A3", "--embedder", bare, "--out", tmp_path, "--warehouse", copy)
    assert ok.exit_code == 0, ok.output
    unknown = ragwh("export", "trec", "--condition", "A3", "--embedder", "bge", "--warehouse", copy)
    assert unknown.exit_code == 1 and "no embedder 'bge' in the warehouse (stored: " in one_line(unknown)
    for args, expected in (
        (("embed", "--corpus", "demoo"), "embed failed: no corpus 'demoo' in the warehouse (loaded: demo;"),
        (("retrieve", "--corpus", "demoo"), "retrieve failed: no corpus 'demoo'"),
        (
            ("retrieve", "--condition", "A9"),
            "retrieve failed: unknown condition(s) A9 (seeds/conditions.csv defines: A0,",
        ),
    ):
        result = ragwh(*args, "--warehouse", copy)
        assert result.exit_code == 1 and one_line(result).startswith(expected), result.output


def test_empty_foreign_and_older_files_are_one_line_errors(copy, tmp_path):
    empty, foreign = tmp_path / "empty.duckdb", tmp_path / "foreign.duckdb"
    duckdb.connect(str(empty)).close()
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE orders (id INTEGER)")
    con.close()
    for command in (("report",), ("export", "trec", "--condition", "A3"), ("export", "tables"), ("sql", "SELECT 1")):
        result = ragwh(*command, "--warehouse", empty)
        assert result.exit_code == 1 and "is an empty DuckDB database (no tables)" in one_line(result), command
        result = ragwh(*command, "--warehouse", foreign)
        assert result.exit_code == 1 and "not a ragwarehouse warehouse (it holds orders)" in one_line(result), command
    con = duckdb.connect(str(copy))  # a warehouse written before versions were recorded
    con.execute("DROP TABLE warehouse_meta; DROP TABLE experiments; DROP TABLE experiment_settings")
    con.close()
    for command in (("report",), ("embed",), ("sql", "SELECT 1")):
        result = ragwh(*command, "--warehouse", copy)
        assert result.exit_code == 1 and f"`ragwh upgrade --warehouse {copy}`" in one_line(result), command
    upgraded = ragwh("upgrade", "--warehouse", copy)
    assert upgraded.exit_code == 0 and "from schema version 1 to" in upgraded.output
    assert "│ 5 " in ragwh("sql", "SELECT count(*) AS n FROM documents", "--warehouse", copy).output


def test_sql_is_read_only_by_default_and_has_a_prompt(copy):
    query = ragwh("sql", "SELECT count(*) AS n_docs FROM documents", "--warehouse", copy)
    assert query.exit_code == 0 and "n_docs" in query.output and "│ 5 " in query.output
    refused = ragwh("sql", "DELETE FROM documents", "--warehouse", copy)
    assert refused.exit_code == 1 and "opened read-only: pass --write" in one_line(refused)
    csv = ragwh("sql", "SELECT 41 + 1 AS answer, NULL AS nothing", "--csv", "--warehouse", copy)
    assert csv.output == "answer,nothing\n42,\n"
    from typer.testing import CliRunner

    from ragwh.cli import app

    prompt = CliRunner().invoke(app, ["sql", "--warehouse", str(copy)], input="SELECT 40 +\n2 AS answer;\n.quit\n")
    assert prompt.exit_code == 0 and "answer" in prompt.output and "│ 42 " in prompt.output
    assert ragwh("sql", "DELETE FROM quarantine", "--write", "--warehouse", copy).exit_code == 0


def test_version():
    from ragwh import __version__

    result = ragwh("--version")
    assert result.exit_code == 0 and result.output == f"ragwh {__version__}\n"
