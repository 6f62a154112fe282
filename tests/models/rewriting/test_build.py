"""The rewriting build on an empty warehouse (green, every mart empty), a rebuild that gives identical
tables, and bad input the build refuses with the failing test named."""

from __future__ import annotations

import shutil

import pytest

from tests.models.rewriting.conftest import build
from warehouse.db import connect
from warehouse.dbt import DbtError

MARTS = (
    "rewrite_query_metrics",
    "rewrite_baseline_deltas",
    "rewrite_solo",
    "rewrite_failure_modes",
    "rewrite_jaccard",
    "rewrite_oracle",
    "rewrite_ensembles",
    "rewrite_budget_baselines",
    "rewrite_router_sweep",
    "rewrite_router_tau",
    "rewrite_router_pareto",
    "rewrite_answer_scores",
    "rewrite_answer_quality",
    "rewrite_reader_inputs",
    "rewrite_exclusions",
    "rewrite_query_type_cuts",
    "rewrite_ann_recall",
    "rewrite_score_distribution",
    "rewrite_slices",
)


def _digests(con) -> dict[str, tuple[int, str]]:
    """Row count and md5 of the sorted rows of every mart (doubles print exactly: shortest round trip)."""
    return {
        m: con.execute(
            f"select count(*), md5(coalesce(string_agg(t::varchar, '|' order by t::varchar), '')) from {m} as t"
        ).fetchone()
        for m in MARTS
    }


def test_empty_warehouse_builds_green_with_empty_marts(tmp_path):
    wh = tmp_path / "empty.duckdb"
    connect(wh).close()
    result = build(wh, tmp_path)
    assert set(result.statuses.values()) <= {"success", "pass"}
    con = connect(wh, read_only=True)
    assert {m: n for m, (n, _) in _digests(con).items()} == dict.fromkeys(MARTS, 0)
    con.close()


def test_rebuild_gives_identical_tables(warehouse, db, tmp_path):
    wh, _ = warehouse
    before = _digests(db)
    assert all(n > 0 for n, _ in before.values())
    copy = tmp_path / "copy.duckdb"
    shutil.copy(wh, copy)
    build(copy, tmp_path)
    con = connect(copy, read_only=True)
    assert _digests(con) == before
    con.close()


def test_a_strategy_missing_from_the_seed_fails_the_build_by_name(tmp_path):
    wh = tmp_path / "bad.duckdb"
    con = connect(wh)
    con.execute("insert into documents values ('c/d1', 'c', 'D', 'D\n\ntext', null, null, 'f')")
    con.execute("insert into queries values ('c/q1', null, 'c', 'question', 'bridge')")
    con.execute("insert into qrels values ('c/q1', 'c/d1', 1)")
    con.execute("insert into rewrite_runs values ('c', 'e', 'none', 'S9', 42, 'c/q1', 1, 'c/d1', 0.5, 0)")
    con.close()
    with pytest.raises(DbtError, match="relationships_int_rewrite_rankings_strategy"):
        build(wh, tmp_path)
