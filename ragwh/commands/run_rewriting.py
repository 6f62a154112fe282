"""``ragwh run`` for ``study: rewriting`` configs: the pipeline, then its stage table, funnel, row counts and report."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from ragwh.experiment.config.rewriting import RewritingConfig


def run_rewriting(
    console: Console,
    cfg: RewritingConfig,
    *,
    data: Path | None,
    warehouse: Path | None,
    overrides: dict,
    report: Path | None = None,
) -> None:
    """Run the rewriting pipeline; failures exit 1 with the stage's one-line message (a run that failed
    before loading anything leaves no new warehouse file)."""
    from ragwh.experiment.config.chunking import ConfigError
    from ragwh.experiment.pipeline.rewriting import RewritingPipeline
    from ragwh.experiment.pipeline.stages import PipelineError
    from warehouse.db import discard_if_empty
    from warehouse.dbt import DbtError

    banner = cfg.tiny_model_label
    if banner:
        console.print(Panel(banner, style="bold yellow"))
    pipeline = RewritingPipeline(cfg, data=data, warehouse=warehouse, report_path=report, console=console)
    pipeline.overrides = overrides  # --limit: the first N questions of every hotpotqa corpus
    existed = pipeline.warehouse.exists()
    _ = pipeline.con  # open it now: a warehouse that cannot be opened fails before anything runs
    try:
        pipeline.run()
    except (ConfigError, PipelineError, DbtError) as exc:
        if not existed:
            discard_if_empty(pipeline.warehouse)
        console.print(f"[red]run failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1)
    print_summary(console, pipeline)
    if pipeline.outcome.report:
        console.print(f"report: {escape(str(pipeline.outcome.report))}")
    if banner:
        console.print(Panel(banner, style="bold yellow"))


def print_summary(console: Console, pipeline) -> None:
    """Stage timings, the rewriting funnel per strategy and seed, and the rows of each lineage table."""
    from warehouse.db import connect

    stages = Table(title="stages")
    for col in ("stage", "scope", "status", "seconds", "peak RSS MiB", "detail"):
        stages.add_column(col, overflow="fold", no_wrap=col in ("stage", "status"))
    for s in pipeline.outcome.stages:
        stages.add_row(
            escape(s.stage), escape(s.scope), s.status, f"{s.seconds:.1f}", f"{s.peak_rss_mb:.0f}", escape(s.detail)
        )
    console.print(stages)
    if not pipeline.outcome.did_work:
        console.print(
            "[green]nothing changed since the last run: no ingest, LLM call, embedding or dbt build was done[/]"
        )
    con = connect(pipeline.warehouse)
    try:
        reasons = [
            "llm_answers",
            "empty_answer",
            "no_usable_line",
            "generated",
            "identical",
            "duplicate",
            "cosine_low",
            "cosine_high",
            "kept",
            "fallback",
        ]
        funnel = Table(title="rewriting funnel of the LLM strategies (per corpus, embedder, strategy, seed)")
        for col in ("corpus", "embedder", "strategy", "seed", *reasons):
            funnel.add_column(col.replace("_", " "), justify="right", overflow="fold")
        rows = con.execute(
            "SELECT corpus, stage, map_from_entries(list(struct_pack(k := reason, v := n))) FROM funnel "
            "WHERE starts_with(stage, 'rewrite:') GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        for corpus, stage, counts in rows:
            if counts.get("llm_answers", 0):
                embedder, strategy, seed = stage.removeprefix("rewrite:").rsplit(":", 2)
                funnel.add_row(
                    escape(corpus), escape(embedder), escape(strategy), seed, *(str(counts.get(r, 0)) for r in reasons)
                )
        console.print(funnel if funnel.row_count else "no LLM strategy ran: the funnel has no LLM answers to count")
        rows = con.execute(
            "SELECT (SELECT count(*) FROM rewrites), (SELECT count(*) FROM rewrite_text_runs), "
            "(SELECT count(*) FROM rewrite_runs)"
        ).fetchone()
        console.print(
            f"rewrites {rows[0]:,} rows, rewrite_text_runs {rows[1]:,}, rewrite_runs {rows[2]:,}; "
            "the study's marts: rewrite_solo, rewrite_ensembles, rewrite_router_sweep, ... "
            "(docs/rewriting_marts.md)"
        )
    finally:
        con.close()
