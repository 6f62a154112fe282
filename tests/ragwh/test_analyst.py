"""``from ragwh import open_warehouse``: the marts as polars DataFrames, read-only, with the experiment record."""

from __future__ import annotations

import json

import duckdb
import polars as pl
import pytest

from ragwh import open_warehouse
from warehouse.db import WarehouseError, connect


@pytest.fixture()
def small(tmp_path):
    """A warehouse file holding two experiment records and a three-row contrasts table."""
    path = tmp_path / "w.duckdb"
    con = connect(path)  # a warehouse of the current schema
    columns = (
        "experiment_id, name, started_at, config_json, packages_json, study, config_file, config_hash, "
        "source_json, overrides_json, project_version, precision, device, status"
    )
    rest = ("chunking", "x.yml", "h", "{}", "{}", "0.1.0", "fp32", "cpu", "finished")
    con.executemany(
        f"INSERT INTO experiments ({columns}) VALUES ({', '.join(['?'] * 14)})",
        [
            (1, "old", "2026-01-01", json.dumps({"k": 1}), "{}", *rest),
            (2, "cpu", "2026-02-01", json.dumps({"k": 10}), json.dumps({"duckdb": "2.0.1"}), *rest),
        ],
    )
    con.execute(
        "CREATE TABLE contrasts (contrast VARCHAR, metric VARCHAR, corpus VARCHAR, embedder VARCHAR, "
        "reranker VARCHAR, is_primary BOOLEAN, mean_delta DOUBLE)"
    )
    con.execute(
        "INSERT INTO contrasts VALUES ('C3', 'MRR', 'q', 'e', 'none', false, 0.5), "
        "('C2', 'cov-nDCG@10', 'q', 'e', 'none', true, 0.25), ('C3', 'cov-nDCG@10', 'q', 'e', 'none', true, -0.1)"
    )
    con.close()
    return path


def test_marts_come_back_as_polars_frames_with_the_newest_experiment_attached(small):
    with open_warehouse(small) as wh:
        contrasts = wh.contrasts()
        assert isinstance(contrasts, pl.DataFrame)
        # the primary cell first, then by metric and contrast
        assert contrasts.select("contrast", "metric", "mean_delta").rows() == [
            ("C2", "cov-nDCG@10", 0.25),
            ("C3", "cov-nDCG@10", -0.1),
            ("C3", "MRR", 0.5),
        ]
        assert wh.table("contrasts", metric="MRR")["mean_delta"].to_list() == [0.5]
        assert wh.sql("SELECT count(*) AS n FROM contrasts WHERE mean_delta > ?", [0])["n"].item() == 2
        record = wh.experiment
        assert (record["name"], record["config"], record["packages"]) == ("cpu", {"k": 10}, {"duckdb": "2.0.1"})
        assert wh.experiments["experiment_id"].to_list() == [2, 1]
        assert "'cpu' (chunking, finished), read-only" in repr(wh)


def test_the_warehouse_is_read_only_and_names_are_checked(small):
    wh = open_warehouse(small)
    try:
        with pytest.raises(duckdb.Error, match="read-only"):
            wh.sql("DELETE FROM contrasts")
        with pytest.raises(WarehouseError, match="no table or view 'contrast'"):
            wh.table("contrast")
        with pytest.raises(WarehouseError, match="has no column 'metrc'"):
            wh.table("contrasts", metrc="MRR")
        # a filter value is bound, never pasted into the SQL
        assert wh.table("contrasts", metric="x' OR '1'='1").height == 0
    finally:
        wh.close()
    assert duckdb.connect(str(small)).execute("SELECT count(*) FROM contrasts").fetchone() == (3,)


def test_a_missing_file_is_one_line_and_nothing_is_created(tmp_path):
    with pytest.raises(WarehouseError) as exc:
        open_warehouse(tmp_path / "none.duckdb")
    assert "\n" not in str(exc.value)
    assert not (tmp_path / "none.duckdb").exists()
