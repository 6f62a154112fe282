"""``ragwh run``: the whole experiment, resumable, ending with a printed summary and the report."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from ragwh.experiment.config.chunking import ConfigError
from ragwh.experiment.config.rewriting import RewritingConfig, load_experiment
from warehouse.paths import data_dir, warehouse_path


def run_command(
    config: Optional[Path] = typer.Option(
        None, "--config", help="experiment YAML (default: experiments/default.yml, the demo)"
    ),
    data: Optional[Path] = typer.Option(
        None, "--data", help="data directory the config's sources are relative to (default $RAGWH_DATA)"
    ),
    warehouse: Optional[Path] = typer.Option(
        None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE, else warehouse/ragwh.duckdb)"
    ),
    report: Optional[Path] = typer.Option(
        None, "--report", help="report HTML file (default reports/<experiment>.html)"
    ),
    limit: Optional[int] = typer.Option(
        None, "--limit", min=1, help="override the config's document limit (first N papers)"
    ),
    precision: Optional[str] = typer.Option(
        None,
        "--precision",
        help="override every model's precision: auto | fp32 | bf16 "
        "(the stored model names carry it, e.g. all-MiniLM-L6-v2@bf16)",
    ),
    retry_failed: bool = typer.Option(
        False,
        "--retry-failed",
        help="ask the LLM again for answers kept as final failures (failed in llm.max_attempts runs)",
    ),
) -> None:
    """Ingest -> induce -> chunk -> dbt conditions -> embed -> retrieve/rerank -> dbt evaluation -> report."""
    from ragwh.experiment.pipeline.chunking import DEMO_BANNER, Pipeline, PipelineError
    from warehouse.db import discard_if_empty
    from warehouse.dbt import DbtError

    if retry_failed:  # read by every LLM cache of this run (ingest/llm/config.py)
        os.environ["RAGWH_LLM_RETRY_FAILED"] = "1"
    console = Console()
    if not console.is_terminal:  # logs and CI: wide enough for the summary tables
        console = Console(width=160)
    overrides = {k: v for k, v in (("limit", limit), ("precision", precision)) if v is not None}
    try:
        cfg = load_experiment(config, overrides)
    except ConfigError as exc:
        console.print(f"[red]config error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2)
    try:
        check_llm(cfg)
    except Exception as exc:  # ingest.llm.LLMError: what to install, before any banner
        console.print(f"[red]run failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1)
    if not preflight_passed(console, cfg, data_dir(data), warehouse_path(warehouse), report):
        raise typer.Exit(1)
    if isinstance(cfg, RewritingConfig):  # study: rewriting (ragwh/experiment/pipeline/rewriting.py)
        from ragwh.commands.run_rewriting import run_rewriting

        run_rewriting(console, cfg, data=data_dir(data), warehouse=warehouse, overrides=overrides, report=report)
        return
    pipeline = Pipeline(cfg, data=data_dir(data), warehouse=warehouse, report_path=report, console=console)
    pipeline.overrides = overrides
    existed = pipeline.warehouse.exists()
    _ = pipeline.con  # open it now: a warehouse that cannot be opened fails before anything is printed
    banners = [b for b, on in ((DEMO_BANNER, cfg.demo), (_tiny_banner(cfg), cfg.llm.tiny)) if on]
    for banner in banners:
        console.print(Panel(banner, style="bold yellow"))
    try:
        pipeline.run()
    except (ConfigError, PipelineError, DbtError) as exc:
        if not existed:  # a run that failed before loading anything leaves no new warehouse file
            discard_if_empty(pipeline.warehouse)
        console.print(f"[red]run failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1)
    print_summary(console, pipeline)
    for banner in banners:
        console.print(Panel(banner, style="bold yellow"))


def check_llm(cfg) -> None:
    """Raise ``LLMError`` (what to install) when the config's local LLM cannot run here: checked before
    the tiny-model banner, so a missing extra is the first thing said. Replay-only runs load no model."""
    from ingest.llm import LLMError, load_llm_config
    from ingest.llm.local_models import check_local_backend

    if cfg.llm.backend != "transformers":
        return
    try:
        config = load_llm_config({"backend": cfg.llm.backend, **cfg.llm.settings})
    except LLMError:
        return  # the stage reports a bad LLM setting with its own message
    if not config.replay_only:
        check_local_backend(cfg.llm.model)


def preflight_passed(console: Console, cfg, data, warehouse: Path, report: Optional[Path]) -> bool:
    """The cheap checks (paths, names, files, reachability: :func:`ragwh.experiment.checks.preflight`) before the
    first stage: each failure on one line (``ragwh debug`` prints every check); warnings are printed and the run
    goes on."""
    from ragwh.experiment.checks import preflight

    checks = preflight(cfg, data=data, warehouse=warehouse, report=report)
    for check in checks:
        if check.status != "ok":
            label = "run failed" if check.failed else "warning"
            console.print(
                f"[{'red' if check.failed else 'yellow'}]{label}:[/] {escape(check.message())}", soft_wrap=True
            )
    return not any(c.failed for c in checks)


def _tiny_banner(cfg) -> str:
    from ingest.llm.local_models import TINY_MODEL_LABEL

    return f"{TINY_MODEL_LABEL} (llm.model: {cfg.llm.model})"


def print_summary(console: Console, pipeline) -> None:
    """Stage timings, the primary cell's contrast table, per-condition means and what did not run."""
    from ragwh.experiment.report.data import condition_means, condition_order, contrast_rows, primary_cells
    from ragwh.experiment.report.markup import p_text
    from warehouse.db import connect

    outcome = pipeline.outcome
    stages = Table(title="stages", show_lines=False)
    for col in ("stage", "scope", "status", "seconds", "peak RSS MiB", "detail"):
        stages.add_column(col, overflow="fold", no_wrap=col in ("stage", "status"))
    for s in outcome.stages:
        stages.add_row(
            escape(s.stage), escape(s.scope), s.status, f"{s.seconds:.1f}", f"{s.peak_rss_mb:.0f}", escape(s.detail)
        )
    console.print(stages)
    if not outcome.did_work:
        console.print(
            "[green]nothing changed since the last run: no ingest, LLM calls, embedding, retrieval or dbt build were done[/]"
        )

    con = connect(outcome.warehouse)  # same configuration as dbt's in-process connection (not read-only)
    try:
        corpora = {c.name for c in pipeline.config.corpora}  # the experiment's own, whatever else is loaded
        rows = [r for r in contrast_rows(con) if r.get("is_primary") and r["corpus"] in corpora]
        primary = pipeline.config.primary
        table = Table(
            title=escape(
                f"primary cell: {primary.metric} × {pipeline.dbt_vars()['primary_embedder']} × "
                f"reranker {primary.reranker}"
            )
        )
        for col in ("contrast", "arms", "corpus", "n q", "n docs", "mean Δ", "95% CI", "p", "Holm p", "dz"):
            table.add_column(col, justify="right")
        for r in rows:
            table.add_row(
                escape(r["contrast"]),
                escape(r["arms"]),
                escape(r["corpus"]),
                str(r["n_queries"]),
                str(r["n_docs"]),
                _num(r["mean_delta"]),
                f"[{_num(r['ci_low'])}, {_num(r['ci_high'])}]",
                p_text(r["p_value"], r.get("n_boot")),
                p_text(r["p_holm"], r.get("n_boot"), r.get("family_size") or 1),
                _num(r["dz"], "{:.3f}"),
            )
        console.print(table if rows else "[yellow]no primary-cell contrasts were computed[/]")
        cells = primary_cells(pipeline.config, pipeline.dbt_vars()["primary_embedder"])
        all_means = condition_means(con)
        means = [
            m
            for m in all_means
            if m["metric"] == pipeline.config.primary.metric
            and any((m["corpus"], m["embedder"], m["reranker"]) == (c.corpus, c.embedder, c.reranker) for c in cells)
        ]
        mt = Table(title=f"per-condition mean {escape(pipeline.config.primary.metric)} (primary embedder and reranker)")
        for col in ("corpus", "condition", "mean", "n queries"):
            mt.add_column(col, justify="right")
        order = {c: i for i, c in enumerate(condition_order())}
        for m in sorted(means, key=lambda m: (m["corpus"], order.get(m["condition"], 99))):
            mt.add_row(escape(m["corpus"]), escape(m["condition"]), _num(m["mean"], "{:.4f}"), str(m["n"]))
        console.print(mt if means else f"[yellow]{escape(_no_means_reason(primary.metric, all_means))}[/]")
    finally:
        con.close()
    for name, reason in sorted(outcome.not_run.items()):
        console.print(f"[yellow]not run[/] {escape(name)}: {escape(reason)}")
    if outcome.report:
        console.print(f"report: {escape(str(outcome.report))}")


def _no_means_reason(metric: str, all_means: list[dict]) -> str:
    if not all_means:
        return "no per-condition means (query_metrics is empty)"
    held = ", ".join(sorted({m["metric"] for m in all_means}))
    return f"no per-condition means of {metric} in the primary cells (query_metrics holds {held})"


def _num(value, fmt: str = "{:+.4f}") -> str:
    return "–" if value is None else fmt.format(value)


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
