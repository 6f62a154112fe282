"""``warehouse.paths``: the dbt project found in a checkout or beside the installed packages; outputs under
the working directory (``--workdir`` / ``$RAGWH_WORKDIR``, else the current one); dbt's target and logs
follow it; ``--config`` finds a bundled experiment by path or name."""

from __future__ import annotations

import pytest

from ragwh.cli import _options
from ragwh.experiment.config.chunking import ConfigError, config_file, load_config
from warehouse.dbt import dbt_args
from warehouse.paths import (
    PACKAGED_PROJECT,
    PROJECT_ROOT,
    WORKDIR_ENV,
    default_warehouse,
    find_project_root,
    reports_dir,
    warehouse_path,
    workdir,
)


def test_the_project_is_the_checkout_else_the_packaged_copy_else_an_error(tmp_path):
    (tmp_path / "checkout").mkdir()
    (tmp_path / "checkout" / "dbt_project.yml").write_text("name: x\n")
    assert find_project_root(tmp_path / "checkout") == tmp_path / "checkout"
    packaged = tmp_path / "site-packages" / PACKAGED_PROJECT
    packaged.mkdir(parents=True)
    (packaged / "dbt_project.yml").write_text("name: x\n")
    assert find_project_root(tmp_path / "site-packages") == packaged
    with pytest.raises(RuntimeError, match="no dbt project found in .*reinstall"):
        find_project_root(tmp_path)


def test_outputs_go_under_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.setenv(WORKDIR_ENV, "")  # unset for workdir(); restored after the test (--workdir sets it)
    monkeypatch.delenv("RAGWH_WAREHOUSE", raising=False)
    monkeypatch.chdir(tmp_path)
    assert workdir() == tmp_path and warehouse_path() == tmp_path / "warehouse" / "ragwh.duckdb"
    _options(workdir=tmp_path / "out")  # ragwh --workdir out
    assert workdir() == tmp_path / "out" and default_warehouse() == tmp_path / "out" / "warehouse" / "ragwh.duckdb"
    assert reports_dir() == tmp_path / "out" / "reports"
    args = dbt_args("build", None, None)
    assert args[args.index("--project-dir") + 1] == str(PROJECT_ROOT)
    assert args[args.index("--target-path") + 1] == str(tmp_path / "out" / "target")
    assert args[args.index("--log-path") + 1] == str(tmp_path / "out" / "logs")
    own = dbt_args("build", None, None, ["--target-path", "t"])
    assert own.count("--target-path") == 1 and own[-2:] == ["--target-path", "t"]


def test_a_bundled_experiment_is_found_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for given in ("experiments/cpu.yml", "cpu.yml", "cpu"):
        assert config_file(given) == PROJECT_ROOT / "experiments" / "cpu.yml"
    (tmp_path / "cpu.yml").write_text("name: mine\n")  # a file of that name here comes first
    assert config_file("cpu.yml") == tmp_path / "cpu.yml"
    with pytest.raises(ConfigError, match=r"cpux: config file not found \(bundled experiments in .*: .*cpu, default"):
        load_config("cpux")


@pytest.mark.parametrize("where", ["before", "after", "nested"])
def test_workdir_is_taken_before_or_after_the_subcommand(tmp_path, monkeypatch, where):
    """``ragwh --workdir D sql ...``, ``ragwh sql --workdir D ...`` and ``ragwh export tables --workdir D`` alike."""
    from typer.testing import CliRunner

    from ragwh.cli import app

    monkeypatch.setenv(WORKDIR_ENV, "")
    monkeypatch.delenv("RAGWH_WAREHOUSE", raising=False)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    args = {
        "before": ["--workdir", str(out), "sql", "SELECT 1"],
        "after": ["sql", "SELECT 1", "--workdir", str(out)],
        "nested": ["export", "tables", "--workdir", str(out)],
    }[where]
    result = CliRunner().invoke(app, args)
    # no warehouse there yet: the one-line error names the file under the working directory given
    assert result.exit_code == 1 and f"no warehouse at {out / 'warehouse' / 'ragwh.duckdb'}" in " ".join(
        result.output.split()
    ), result.output
    assert workdir() == out
