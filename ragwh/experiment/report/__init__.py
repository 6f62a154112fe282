"""The experiment report: ONE self-contained HTML file (figures embedded as SVG; the rewriting sections' as PNG).

Everything is read from the warehouse: the evaluation marts (``contrasts``, ``primary_contrasts``,
``embedding_truncation``, ``condition_index``, ``evaluation_exclusions``, ``shallow_runs``, ``condition_means``,
``metric_cuts``, ``contrast_slices``, ``dose_response``, ``section_recall_summary``) and the loaded tables (``funnel``,
``chunks``); the query-rewriting study's sections (report/rewriting.py) follow when its marts hold
rows; a rewriting experiment's report (:func:`write_rewriting_report`) holds those sections alone. Per-condition
means are unweighted means over queries with their 95% document-clustered bootstrap intervals (the
``condition_means`` mart); the primary contrasts and the means are the study's Table 1 and Table 2 as
``ragwh export tables`` writes them (:mod:`ragwh.experiment.tables`). With ``figures`` (a directory)
every figure is also written there as SVG and PDF. A section whose inputs are absent says 'not run'
and why, never shows an empty figure.
"""

from __future__ import annotations

import html
from pathlib import Path

import duckdb

from ragwh.experiment.config.chunking import ExperimentConfig
from ragwh.experiment.report.chunking import (
    section_budget,
    section_contrasts,
    section_cuts,
    section_dose,
    section_exclusions,
    section_forest,
    section_funnel,
    section_means,
    section_not_run,
    section_routing,
    section_sizes,
    section_truncation,
)
from ragwh.experiment.report.data import (
    condition_means,
    contrast_rows,
    held_metrics,
    mart,
    primary_cells,
    primary_embedder_name,
)
from ragwh.experiment.report.markup import CSS, experiment_meta, figures_to, fmt, html_table, section
from ragwh.experiment.report.rewriting import NAV as REWRITING_NAV
from ragwh.experiment.report.rewriting import rewriting_sections
from ragwh.experiment.report.slices import section_slices


def render_report(
    con: duckdb.DuckDBPyConnection,
    config: ExperimentConfig,
    embedder_name: str,
    not_run: dict[str, str] | None = None,
    figures: str | Path | None = None,
) -> str:
    """The whole report as one HTML string (see module docstring); figures also written to ``figures``."""
    with figures_to(figures):
        return _render_report(con, config, embedder_name, not_run)


def _render_report(
    con: duckdb.DuckDBPyConnection, config: ExperimentConfig, embedder_name: str, not_run: dict[str, str] | None = None
) -> str:
    import matplotlib

    matplotlib.use("Agg")
    not_run = dict(not_run or {})
    rows = contrast_rows(con)
    cells = primary_cells(config, embedder_name)
    metrics = held_metrics(con, config.primary.metric)
    means = condition_means(con)
    banner = (
        '<div class="banner">DEMO NUMBERS, NOT RESULTS. This report was produced from the bundled demo '
        "corpus (five short papers written for this project); it shows what the pipeline produces, and its "
        "numbers support no claim. Run an experiment on real data (--config/--data) for results.</div>"
        if config.demo
        else ""
    )
    if config.llm.tiny:
        from ingest.llm.local_models import TINY_MODEL_LABEL

        banner += (
            f'<div class="banner">{html.escape(TINY_MODEL_LABEL)} Model: {html.escape(config.llm.model or "")}; '
            "the induced structure, the A1 contexts and any generated queries in this report come from it.</div>"
        )
    corpora = ", ".join(f"{c.name} ({c.loader})" for c in config.corpora)
    meta = (
        f"<p class='meta'>Experiment <b>{html.escape(config.name)}</b> ({html.escape(config.description)}) · "
        f"corpora {html.escape(corpora)}"
        + (f", first {config.limit} documents" if config.limit else "")
        + f" · embedders {html.escape(', '.join(e.name + (' (strong)' if e.strong else '') for e in config.embedders))}"
        f" · rerankers {html.escape(', '.join(r.name for r in config.rerankers) or 'none')}"
        f" · inducer {html.escape(config.inducer)}"
        f" · LLM {html.escape(config.llm.backend + (' / ' + config.llm.model if config.llm.model else ''))}"
        f" · k = {config.k} · primary cell: "
        f"{html.escape(config.primary.metric)} × {html.escape(embedder_name)} × reranker {html.escape(config.primary.reranker)}</p>"
    )
    nav = (
        "<nav>"
        + "".join(
            f'<a href="#{a}">{t}</a>'
            for a, t in (
                ("contrasts", "contrasts"),
                ("truncation", "truncation"),
                ("exclusions", "exclusions"),
                ("forest", "forest plot"),
                ("means", "means"),
                ("dose", "dose-response"),
                ("cuts", "cuts"),
                ("slices", "slices"),
                ("budget", "token budget"),
                ("routing", "section recall"),
                ("funnel", "funnel"),
                ("sizes", "size matching"),
                ("notrun", "not run"),
            )
        )
        + "</nav>"
    )
    sections = [
        section_contrasts(rows, config, not_run, mart(con, "primary_contrasts", "ORDER BY corpus, contrast"), con),
        section_truncation(mart(con, "embedding_truncation")),
        section_exclusions(con, cells),
        section_shallow(mart(con, "shallow_runs", "ORDER BY corpus, embedder, reranker, condition, metric")),
        section_forest(rows, config.primary.metric),
        section_means(con, cells, metrics, not_run),
        section_dose(
            means,
            cells,
            config.primary.metric,
            mart(con, "dose_response", "ORDER BY corpus, embedder, reranker, family"),
        ),
        section_cuts(con, cells, config.primary.metric),
        section_slices(con, "chunking"),
        section_budget(means, cells),
        section_routing(con),
        section_funnel(con, [c.name for c in config.corpora]),
        section_sizes(con, [c.name for c in config.corpora]),
        section_not_run(not_run),
    ]
    # the query-rewriting study (arXiv 2609.05637): its sections only when its marts hold rows
    rewriting = rewriting_sections(con)
    if rewriting:
        sections += rewriting
        nav = nav.replace("</nav>", "".join(f'<a href="#{a}">{t}</a>' for a, t in REWRITING_NAV) + "</nav>")
    return _page(config.name, banner + meta + experiment_meta(con, "chunking") + nav + "".join(sections))


def section_shallow(rows: list[dict]) -> str:
    """Metrics cut deeper than their (imported) run was retrieved (the ``shallow_runs`` mart); nothing when none."""
    if not rows:
        return ""
    what = (
        "These runs were imported (`ragwh import run`) with rankings shorter than a metric's cutoff. They are "
        "scored as submitted, trec_eval's convention: a metric cut at N counts only the chunks the run returned, "
        "so e.g. R@50 of a 2-deep run is its R@2 and is not comparable with a run retrieved 50 deep."
    )
    return section(
        "shallow",
        "Metrics cut deeper than the run",
        what,
        html_table(
            [
                "corpus",
                "system",
                "reranker",
                "condition",
                "metric",
                "cutoff",
                "run depth",
                "queries",
                "shorter than cutoff",
            ],
            [
                [
                    fmt(r["corpus"]),
                    fmt(r["embedder"]),
                    fmt(r["reranker"]),
                    fmt(r["condition"]),
                    fmt(r["metric"]),
                    fmt(r["cutoff"]),
                    fmt(r["run_depth"]),
                    fmt(r["n_queries"]),
                    fmt(r["n_short"]),
                ]
                for r in rows
            ],
        ),
    )


def _page(name: str, body: str) -> str:
    """The one HTML page around ``body``: title, styles, heading."""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>ragwarehouse report: {html.escape(name)}</title><style>{CSS}</style></head><body>"
        f"<h1>ragwarehouse report: {html.escape(name)}</h1>{body}</body></html>"
    )


def write_report(
    con: duckdb.DuckDBPyConnection,
    config: ExperimentConfig,
    path: str | Path,
    not_run: dict[str, str] | None = None,
    figures: str | Path | None = None,
) -> Path:
    """Render the report and write it to ``path`` (parent folders created; figures also to ``figures``).
    Returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    page = render_report(con, config, primary_embedder_name(con, config), not_run, figures)
    target.write_text(page, encoding="utf-8")
    return target


def render_rewriting_report(
    con: duckdb.DuckDBPyConnection, config, not_run: dict[str, str] | None = None, figures: str | Path | None = None
) -> str:
    """A rewriting experiment's report (``config``: a RewritingConfig): its header, the tiny-model
    banner when the rewrites came from the tiny packaged model, and the rewriting sections (or why
    they are absent), then any stage that did not run and why; figures also written to ``figures``."""
    with figures_to(figures):
        return _render_rewriting_report(con, config, not_run)


def _render_rewriting_report(con: duckdb.DuckDBPyConnection, config, not_run: dict[str, str] | None = None) -> str:
    import matplotlib

    matplotlib.use("Agg")
    banner = f'<div class="banner">{html.escape(config.tiny_model_label)}</div>' if config.tiny_model_label else ""
    if config.demo:
        banner = (
            '<div class="banner">DEMO NUMBERS, NOT RESULTS. The bundled demo corpus (30 questions over 36 '
            "paragraphs written for this project) shows what the study produces; its numbers support no claim.</div>"
            + banner
        )
    corpora = ", ".join(f"{c.name} ({c.loader})" for c in config.corpora)
    meta = (
        f"<p class='meta'>Experiment <b>{html.escape(config.name)}</b> ({html.escape(config.description)}) · "
        f"corpora {html.escape(corpora)}"
        + (f", first {config.limit} questions" if config.limit else "")
        + f" · embedder {html.escape(config.embedder)} · reranker {html.escape(config.reranker or 'none')}"
        f" · LLM {html.escape(config.llm.backend + (' / ' + str(config.llm.model) if config.llm.model else ''))}"
        f" · strategies {html.escape(', '.join(config.settings.strategies))}"
        f" · seeds {html.escape(', '.join(map(str, config.settings.seeds)))}</p>"
    )
    sections = rewriting_sections(con) or [
        (
            '<section id="rw-solo"><h2>rewriting</h2><p class="notrun">not run: the rewriting marts hold no rows '
            "(build them: `dbt build --select +tag:rewriting`, which `ragwh run` does)</p></section>"
        )
    ]
    nav = "<nav>" + "".join(f'<a href="#{a}">{t}</a>' for a, t in REWRITING_NAV) + "</nav>"
    if not_run:
        sections.append(section_not_run(not_run))
    return _page(config.name, banner + meta + experiment_meta(con, "rewriting") + nav + "".join(sections))


def write_rewriting_report(
    con: duckdb.DuckDBPyConnection,
    config,
    path: str | Path,
    not_run: dict[str, str] | None = None,
    figures: str | Path | None = None,
) -> Path:
    """Render a rewriting experiment's report and write it to ``path`` (parent folders created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_rewriting_report(con, config, not_run, figures), encoding="utf-8")
    return target
