"""``ragwh report`` (the HTML report), ``ragwh export trec`` (TREC run, qrels and graded coverage qrels of one
run), ``ragwh export corpus`` (a condition's exact texts as a BEIR corpus) and ``ragwh export tables`` (the
papers' tables as LaTeX / CSV / Markdown, and the report's figures as SVG / PDF)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from ragwh.experiment.config.chunking import ConfigError
from warehouse.paths import reports_dir, workdir

export_app = typer.Typer(help="Export runs for other tools.", no_args_is_help=True)


def experiment_config(con, config: Optional[Path], path: Path, console: Console):
    """The config a report or the tables are written for: ``config`` when it is the warehouse's experiment
    (re-read with that run's command-line overrides), the recorded experiment's without one (the demo's
    when no run is recorded); a foreign or changed config exits 1 with its one line."""
    import json

    from ragwh.experiment.config.rewriting import load_experiment
    from ragwh.experiment.identity import IdentityError, check_config, recorded_config
    from warehouse.identity import latest_experiment

    try:
        if config is None and latest_experiment(con) is not None:
            return recorded_config(con, path)[0]
        cfg = load_experiment(config)
        row = check_config(con, cfg, path) if config is not None else None
        if row is not None and row["overrides_json"] != "{}":  # what the run ran: its --limit, --precision
            cfg = load_experiment(config, json.loads(row["overrides_json"]))
        return cfg
    except ConfigError as exc:
        console.print(f"[red]config error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2)
    except IdentityError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1)


def report_command(
    config: Optional[Path] = typer.Option(
        None,
        "--config",
        help="experiment YAML the warehouse was built with (default: "
        "the warehouse's own experiment, as its last `ragwh run` recorded it)",
    ),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE)"),
    out: Optional[Path] = typer.Option(None, "--out", help="HTML file to write (default reports/<experiment>.html)"),
    figures: Optional[Path] = typer.Option(None, "--figures", help="also write every figure there as SVG and PDF"),
) -> None:
    """Write the self-contained HTML report of the experiment from the warehouse's marts."""
    from ragwh.experiment.config.rewriting import RewritingConfig
    from ragwh.experiment.pipeline.chunking import Pipeline
    from ragwh.experiment.report import write_report, write_rewriting_report
    from warehouse.db import connect
    from warehouse.paths import warehouse_path

    console = Console()
    path = warehouse_path(warehouse)
    con = connect(path, read_only=True)  # an empty, foreign or older file ends here with its one line
    try:
        cfg = experiment_config(con, config, path, console)
        target = out or reports_dir() / f"{cfg.name}.html"
        if isinstance(cfg, RewritingConfig):
            result = write_rewriting_report(con, cfg, target, figures=figures)
        else:
            pipeline = Pipeline(cfg, data=None, warehouse=path, console=console)
            runnable, skipped = cfg.runnable_conditions()
            pipeline.not_run_reasons(runnable, skipped)
            result = write_report(con, cfg, target, not_run=pipeline.outcome.not_run, figures=figures)
    finally:
        con.close()
    console.print(f"report: {escape(str(result))}")


@export_app.command("trec")
def export_trec_command(
    condition: str = typer.Option(..., "--condition", help="condition of the run (e.g. A3)"),
    embedder: Optional[str] = typer.Option(
        None, "--embedder", help="embedder name as stored in runs (needed if several)"
    ),
    reranker: str = typer.Option("none", "--reranker", help="reranker name as stored in runs; 'none' = first stage"),
    corpus: Optional[str] = typer.Option(None, "--corpus", help="corpus (needed if several)"),
    level: str = typer.Option("chunk", "--level", help="chunk (docno = chunk_id) or document (docno = doc_id)"),
    out: Optional[Path] = typer.Option(
        None, "--out", help="directory for the .run and .qrels files (default exports/)"
    ),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE)"),
) -> None:
    """Write a TREC run file and the matching qrels (score them with ranx or trec_eval)."""
    from ragwh.experiment.export import ExportError, export_trec
    from warehouse.db import connect

    console = Console()
    con = connect(warehouse, read_only=True)
    try:
        result = export_trec(
            con,
            condition,
            out or workdir() / "exports",
            corpus=corpus,
            embedder=embedder,
            reranker=reranker,
            level=level,
        )
    except ExportError as exc:
        console.print(f"[red]export failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1)
    finally:
        con.close()
    console.print(escape(f"run:   {result.run_file} ({result.run_lines} lines, {result.n_queries} queries)"))
    console.print(escape(f"qrels: {result.qrels_file} ({result.qrels_lines} lines)"))
    if result.graded_file is not None:
        console.print(
            escape(f"graded qrels (coverage gains x 10^12): {result.graded_file} ({result.graded_lines} lines)")
        )


@export_app.command("corpus")
def export_corpus_command(
    condition: str = typer.Option(..., "--condition", help="condition whose texts to write (e.g. A3)"),
    corpus: Optional[str] = typer.Option(None, "--corpus", help="corpus (needed if the condition holds several)"),
    out: Path = typer.Option(..., "--out", help="directory for corpus.jsonl, queries.jsonl, qrels/test.tsv"),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE)"),
) -> None:
    """Write the exact texts a condition embeds (prefix + content, chunk ids as _id) as a BEIR corpus."""
    from ragwh.experiment.export import ExportError, export_corpus
    from warehouse.db import connect

    console = Console()
    con = connect(warehouse, read_only=True)
    try:
        result = export_corpus(con, condition, out, corpus=corpus)
    except ExportError as exc:
        console.print(f"[red]export failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1)
    finally:
        con.close()
    console.print(
        escape(
            f"{result.directory}: {result.n_texts} texts of {result.corpus}/{result.condition}, "
            f"{result.n_queries} queries, {result.n_qrels} qrels lines"
        )
    )
    console.print(
        escape(
            f"a run over these ids comes back with: ragwh import run RUN --name NAME --condition "
            f"{result.condition} --corpus {result.corpus}"
        )
    )


@export_app.command("tables")
def export_tables_command(
    fmt: list[str] = typer.Option(["latex", "csv", "markdown"], "--format", help="latex | csv | markdown (repeatable)"),
    out: Optional[Path] = typer.Option(None, "--out", help="directory for the table files (default exports/tables/)"),
    figures: Optional[Path] = typer.Option(
        None, "--figures", help="also write every report figure there as SVG and PDF"
    ),
    config: Optional[Path] = typer.Option(
        None, "--config", help="experiment YAML the warehouse was built with (default: the warehouse's own experiment)"
    ),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE)"),
) -> None:
    """Write the papers' tables (chunking Table 1 and 2; the rewriting study's) from the marts."""
    from ragwh.experiment.config.rewriting import RewritingConfig
    from ragwh.experiment.pipeline.chunking import Pipeline
    from ragwh.experiment.tables import export_tables
    from warehouse.db import connect
    from warehouse.paths import warehouse_path

    console = Console()
    path = warehouse_path(warehouse)
    con = connect(path, read_only=True)  # an empty, foreign or older file ends here with its one line
    try:
        cfg = experiment_config(con, config, path, console)
        not_run: dict[str, str] = {}
        if not isinstance(cfg, RewritingConfig):
            pipeline = Pipeline(cfg, data=None, warehouse=path, console=console)
            pipeline.not_run_reasons(*cfg.runnable_conditions())
            not_run = pipeline.outcome.not_run
        result = export_tables(
            con, cfg, out or workdir() / "exports" / "tables", formats=fmt, figures=figures, not_run=not_run
        )
    except ValueError as exc:
        console.print(f"[red]export failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2)
    except OSError as exc:  # --out / --figures: a regular file, under one, or in a folder we may not write
        console.print(f"[red]export failed:[/] {escape(unwritable(exc, out, figures))}", soft_wrap=True)
        raise typer.Exit(1)
    finally:
        con.close()
    for path in result.files:
        console.print(escape(f"table:  {path}"))
    for path in result.figures:
        console.print(escape(f"figure: {path}"))
    for name, reason in result.skipped.items():
        console.print(f"[yellow]not written[/] {escape(name)}: {escape(reason)}")
    if not result.files:
        console.print("[red]no table was written: build the marts first (`ragwh run`)[/]")
        raise typer.Exit(1)


def unwritable(exc: OSError, out: Optional[Path], figures: Optional[Path]) -> str:
    """One line for a table or figure file that could not be written: the path, why, what to pass instead."""
    path = Path(exc.filename) if exc.filename else (out or figures)
    option = (
        "--figures" if figures is not None and path is not None and Path(figures) in (path, *path.parents) else "--out"
    )
    blocker = next((p for p in (path, *path.parents) if p.exists() and not p.is_dir()), None) if path else None
    if blocker is not None:
        return f"cannot write {path}: {blocker} is a file, not a directory: pass {option} with a directory you can write to"
    return f"cannot write {path}: {(exc.strerror or type(exc).__name__).lower()}: pass {option} with a directory you can write to"


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
    app.add_typer(export_app, name="export")
