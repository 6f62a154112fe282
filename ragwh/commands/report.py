"""``ragwh report`` (the HTML report) and ``ragwh export trec`` (TREC run + qrels of one run)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from ragwh.experiment.config.chunking import ConfigError, load_config

export_app = typer.Typer(help="Export runs for other tools.", no_args_is_help=True)


def report_command(
    config: Optional[Path] = typer.Option(None, "--config", help="experiment YAML the warehouse was built with (default: the demo)"),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE)"),
    out: Optional[Path] = typer.Option(None, "--out", help="HTML file to write (default reports/<experiment>.html)"),
) -> None:
    """Write the self-contained HTML report of the experiment from the warehouse's marts."""
    from warehouse.db import connect
    from ragwh.experiment.pipeline.chunking import REPORTS_DIR, Pipeline
    from ragwh.experiment.report import write_report

    console = Console()
    try:
        cfg = load_config(config)
    except ConfigError as exc:
        console.print(f"[red]config error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2)
    pipeline = Pipeline(cfg, data=None, warehouse=warehouse, console=console)
    runnable, skipped = cfg.runnable_conditions()
    pipeline.not_run_reasons(runnable, skipped)
    con = connect(pipeline.warehouse, read_only=True)
    try:
        path = write_report(con, cfg, out or REPORTS_DIR / f"{cfg.name}.html", not_run=pipeline.outcome.not_run)
    finally:
        con.close()
    console.print(f"report: {escape(str(path))}")


@export_app.command("trec")
def export_trec_command(
    condition: str = typer.Option(..., "--condition", help="condition of the run (e.g. A3)"),
    embedder: Optional[str] = typer.Option(None, "--embedder", help="embedder name as stored in runs (needed if several)"),
    reranker: str = typer.Option("none", "--reranker", help="reranker name as stored in runs; 'none' = first stage"),
    corpus: Optional[str] = typer.Option(None, "--corpus", help="corpus (needed if several)"),
    level: str = typer.Option("chunk", "--level", help="chunk (docno = chunk_id) or document (docno = doc_id)"),
    out: Path = typer.Option(Path("exports"), "--out", help="directory for the .run and .qrels files"),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE)"),
) -> None:
    """Write a TREC run file and the matching qrels (score them with ranx or trec_eval)."""
    from warehouse.db import connect
    from ragwh.experiment.export import ExportError, export_trec

    console = Console()
    con = connect(warehouse, read_only=True)
    try:
        result = export_trec(con, condition, out, corpus=corpus, embedder=embedder, reranker=reranker, level=level)
    except ExportError as exc:
        console.print(f"[red]export failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1)
    finally:
        con.close()
    console.print(escape(f"run:   {result.run_file} ({result.run_lines} lines, {result.n_queries} queries)"))
    console.print(escape(f"qrels: {result.qrels_file} ({result.qrels_lines} lines)"))


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
    app.add_typer(export_app, name="export")
