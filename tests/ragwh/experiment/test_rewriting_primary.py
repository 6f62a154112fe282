"""The rewriting study's primary metric is the setting rewriting_primary_metric the warehouse's marts were built with
(``warehouse.identity.setting``: the value the run stored in experiment_settings, else dbt_project.yml's HIT@10),
never a constant: the paper tables, the report's sections and ``ragwh slice`` show the metric the run used."""

from __future__ import annotations

import json

import duckdb
import pytest

from ragwh.experiment.config.rewriting import load_experiment
from ragwh.experiment.report.rewriting import rewriting_sections
from ragwh.experiment.slices import COLUMNS, sliced
from ragwh.experiment.tables import definitions_for
from ragwh.experiment.tables.build import Context, build
from warehouse.identity import setting
from warehouse.paths import PROJECT_ROOT

CELL = "'hotpotqa', 'bge', 'none'"
METRICS = {"HIT@10": 0.5, "nDCG@10": 0.25}  # metric -> S1's mean; p and Holm p differ per metric too


def _warehouse(primary: str | None) -> duckdb.DuckDBPyConnection:
    """rewrite_solo, rewrite_router_tau and rewrite_slices with rows for HIT@10 and nDCG@10, and experiment_settings
    holding ``primary`` (no row when None)."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE experiment_settings (name VARCHAR, value_json VARCHAR, study VARCHAR, experiment_id INTEGER)"
    )
    if primary is not None:
        con.execute(
            "INSERT INTO experiment_settings VALUES ('rewriting_primary_metric', ?, 'rewriting', 1)",
            [json.dumps(primary)],
        )
    solo = []
    for i, (metric, mean) in enumerate(METRICS.items()):
        solo.append(f"({CELL}, 'S1', '{metric}', 3, 50, {mean}, 0.01, NULL, NULL, NULL, NULL, NULL, NULL, 1)")
        solo.append(
            f"({CELL}, 'HyDE', '{metric}', 3, 50, {mean + 0.1}, 0.02, 50, {0.1 + i / 100}, 0.05, 0.15, "
            f"{0.01 + i / 10}, {0.02 + i / 10}, 5)"
        )
    con.execute("""CREATE TABLE rewrite_solo (corpus VARCHAR, embedder VARCHAR, reranker VARCHAR, strategy VARCHAR,
        metric VARCHAR, n_seeds INTEGER, n_queries_per_seed INTEGER, mean_value DOUBLE, sd_seeds DOUBLE,
        n_paired INTEGER, delta DOUBLE, ci_low DOUBLE, ci_high DOUBLE, p_value DOUBLE, p_holm DOUBLE, family_size INTEGER)""")
    con.execute("INSERT INTO rewrite_solo VALUES " + ", ".join(solo))
    con.execute(f"""CREATE TABLE rewrite_router_tau AS SELECT * FROM (VALUES
        ({CELL}, 'Q2D', 'paper', 'fixed', 'HIT@10', 0.65, 0.3, 0.61, 0.5, 0.7, 0.11, -0.09, 0.3, 0.6, 0.01),
        ({CELL}, 'Q2D', 'paper', 'fixed', 'nDCG@10', 0.65, 0.3, 0.41, 0.25, 0.45, 0.16, -0.04, 0.3, 0.6, 0.02))
        t(corpus, embedder, reranker, helper, rule, source, metric, tau, pct_expanded, router_value, baseline_value,
          merge_value, delta_vs_baseline, delta_vs_merge, calls_per_query, best_grid_tau, gap)""")
    values = ", ".join(
        f"('HyDE', {CELL}, '{m}', 'type', 'bridge', 30, 10, {v}, 0, 0.2, 0.04, 0.04, 1, false, 300, "
        f"0.1, 50, 0.5, 0.6, 2, {m == primary}, 'solo')"
        for m, v in METRICS.items()
    )
    con.execute(
        f"CREATE TABLE rewrite_slices AS SELECT * FROM (VALUES {values}) "
        f"t({', '.join(COLUMNS)}, is_primary_metric, kind)"
    )
    return con


def test_the_setting_is_the_stored_value_else_the_projects_default():
    con = duckdb.connect()
    assert setting(con, "rewriting_primary_metric") == "HIT@10"  # no experiment_settings table: dbt_project.yml
    assert setting(_warehouse(None), "rewriting_primary_metric") == "HIT@10"
    assert setting(_warehouse("nDCG@10"), "rewriting_primary_metric") == "nDCG@10"
    with pytest.raises(KeyError, match="unknown setting 'rewriting_primary'"):
        setting(con, "rewriting_primary")


@pytest.mark.parametrize("primary", ["nDCG@10", "HIT@10"])
def test_the_tables_show_the_primary_metric_the_run_stored(primary):
    con = _warehouse(primary)
    config = load_experiment(PROJECT_ROOT / "experiments" / "rewriting-s1.yml", {})
    tables = {d.name: (d, ctx) for d, ctx in definitions_for(con, config)}
    (solo,) = build(con, *tables["rewriting-solo"])
    assert solo.headers[3] == f"Holm p ({primary})"
    holm = {r["strategy"]: r["p_holm_primary"] for r in solo.records}
    assert holm["HyDE"] == pytest.approx(0.02 + list(METRICS).index(primary) / 10) and holm["S1"] is None
    assert primary in tables["rewriting-ensembles"][0].caption
    (router,) = build(con, *tables["rewriting-router"])
    assert primary in router.headers and {r["metric"] for r in router.records} == {primary}
    assert [float(r["router_value"]) for r in router.records] == [0.61 if primary == "HIT@10" else 0.41]
    assert tables["rewriting-oracle"][0].columns[1].header == "oracle HIT@10"  # HIT@10 by definition (rewrite_oracle)
    assert tables["rewriting-solo"][1] == Context(primary_metric=primary, label=tables["rewriting-solo"][1].label)


def test_the_report_and_slices_show_the_primary_metric_the_run_stored():
    con = _warehouse("nDCG@10")
    page = "".join(rewriting_sections(con))
    assert "Δ nDCG@10 vs S1" in page and "Holm p (nDCG@10)" in page and "Δ HIT@10 vs S1" not in page
    # HyDE's nDCG@10 difference from S1 (0.110), not its HIT@10 one (0.100)
    assert '<td class="num">0.110</td>' in page and '<td class="num">0.100</td>' not in page
    (s,) = sliced(con, "HyDE")
    assert s.metric == "nDCG@10"  # is_primary_metric: the setting the mart was built with
