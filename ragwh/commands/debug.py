"""``ragwh debug``: is this machine and this config ready for a run? One line per check, ✓ / ! / ✗ and what to do
(``dbt debug`` is the convention); exit status 1 when any check would make the run fail."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape


def debug_command(
    config: Optional[Path] = typer.Option(None, "--config", help="experiment YAML or bundled name (default: the demo)"),
    data: Optional[Path] = typer.Option(
        None, "--data", help="data directory the config's sources are relative to (default $RAGWH_DATA)"
    ),
    warehouse: Optional[Path] = typer.Option(
        None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE, else warehouse/ragwh.duckdb)"
    ),
) -> None:
    """Check Python, torch and the device, the dbt project, the working directory and warehouse, disk and memory,
    every model, the LLM backend and the data files of a config, without running anything."""
    from ragwh.experiment.checks import all_checks
    from ragwh.experiment.config.chunking import ConfigError
    from ragwh.experiment.config.rewriting import load_experiment
    from warehouse.paths import data_dir, warehouse_path

    console = Console(soft_wrap=True)
    try:
        cfg = load_experiment(config)
    except ConfigError as exc:
        console.print(f"✗ config: {escape(str(exc))}")
        raise typer.Exit(1)
    console.print(f"ragwh debug: experiment {escape(cfg.name)!r} ({escape(str(cfg.source_file))})")
    checks = all_checks(cfg, data=data_dir(data), warehouse=warehouse_path(warehouse))
    for check in checks:
        colour = {"ok": "green", "warn": "yellow", "fail": "red"}[check.status]
        console.print(f"[{colour}]{escape(check.line())}[/]")
    failed = [c.name for c in checks if c.failed]
    if failed:
        console.print(f"[red]{len(failed)} check(s) would make the run fail: {escape(', '.join(failed))}[/]")
        raise typer.Exit(1)
    console.print("[green]all checks passed[/]")


def register(app: typer.Typer) -> None:
    app.command("debug")(debug_command)
