"""``warehouse.dbt.run_dbt``: dbt in-process on the given warehouse file, failures named clearly."""

from __future__ import annotations

import duckdb
import pytest

from warehouse.dbt import DbtError, dbt_args, run_dbt


def test_args_carry_project_profiles_and_vars():
    args = dbt_args("build", "tag:conditions", {"inducer": "llm", "bootstrap_b": 100})
    assert args[:3] == ["build", "--select", "tag:conditions"]
    assert args[args.index("--vars") + 1] == '{"bootstrap_b": 100, "inducer": "llm"}'
    assert "--project-dir" in args and "--profiles-dir" in args


def test_runs_on_the_given_file_and_names_failing_nodes(warehouse_file, tmp_path, monkeypatch):
    other = tmp_path / "other.duckdb"
    monkeypatch.setenv("RAGWH_WAREHOUSE", str(other))  # run_dbt must use its argument, not the env
    target = ["--target-path", str(tmp_path / "target")]  # one target: the second call parses partially
    result = run_dbt("seed", warehouse_file, progress=False, extra=target)
    assert (
        set(result.statuses.values()) == {"success"} and result.n_nodes == 6
    )  # conditions, contrast_family, fusion_rules, metric_registry, rewrite_strategies, slice_labels
    con = duckdb.connect(str(warehouse_file), read_only=True)  # dbt released its in-process handle
    assert con.execute("SELECT count(*) FROM conditions").fetchone()[0] > 10
    con.close()
    assert not other.exists()

    with pytest.raises(DbtError) as info:
        # int_condition_texts without its staging views: a runtime error in that model
        run_dbt("run", warehouse_file, select="int_condition_texts", progress=False, extra=target)
    message = str(info.value)
    assert "failed on 1 node(s)" in message and "model.ragwarehouse.int_condition_texts: error" in message
    assert f"RAGWH_WAREHOUSE={warehouse_file}" in message
