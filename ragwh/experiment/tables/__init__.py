"""Paper tables from the marts: ``ragwh export tables --format latex|csv|markdown [--out DIR] [--figures DIR]``.

The chunking study (arXiv 2610.10170): Table 1 (the primary cell's pre-registered contrasts) and Table 2
(per-condition means with 95% document-clustered intervals, metrics as columns), :mod:`.chunking`. The
query-rewriting study (arXiv 2609.05637), in the paper's numbering: solo strategies (Table 3: mean ± sd over
seeds, marks against S1, bold best), oracle union (4), ensembles (5), router (6), budget-matched controls
(11), tau sweep (12), router helpers (13), answer quality (14), :mod:`.rewriting`. Both studies: one slices table
per label (exploratory; marts contrast_slices, rewrite_slices), :mod:`.slices`.
One definition per table (:mod:`.spec`), one renderer per format (:mod:`.render`); the HTML report
renders every table from the same definitions, so the report and the paper show the same
numbers. Files: ``<table>.tex`` (a ``table`` float each group; ``tables.tex`` is a document that
``\\input``s them and compiles as is with pdflatex: booktabs, graphicx), ``<table>.csv`` (the raw records,
full precision), ``<table>.md``. Captions carry the demo / tiny-model label when it applies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ragwh.experiment.tables.build import Context, build, skipped_reason
from ragwh.experiment.tables.render import latex_document, to_csv, to_latex, to_markdown
from ragwh.experiment.tables.spec import Rendered, TableDef

FORMATS = ("latex", "csv", "markdown")
_EXT = {"latex": "tex", "csv": "csv", "markdown": "md"}
DEMO_LABEL = "DEMO NUMBERS, NOT RESULTS: the bundled demo corpus, written for this project."


@dataclass
class Exported:
    files: list[Path] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # table -> why it was not written
    figures: list[Path] = field(default_factory=list)


def chunking_context(cells, metrics, label: str = "", not_run: dict[str, str] | None = None) -> Context:
    """The chunking tables' context: the primary cells (objects with corpus / embedder / reranker); Table 1's
    caption names each pre-registered contrast of ``not_run`` (contrast -> reason) with its reason."""
    from ragwh.experiment.config.chunking import known_contrasts
    from ragwh.experiment.report.data import condition_order

    not_run = not_run or {}
    missing = [f"{c} ({' − '.join(arms)}): {not_run[c]}" for c, arms in known_contrasts().items() if c in not_run]
    notes = (("chunking-table1", "Not in this table: " + "; ".join(missing) + "."),) if missing else ()
    return Context(
        cells=tuple((c.corpus, c.embedder, c.reranker) for c in cells),
        metrics=tuple(metrics),
        conditions=tuple(condition_order()),
        primary_metric=metrics[0] if metrics else "",
        label=label,
        notes=notes,
    )


def chunking_label(config) -> str:
    """The caption label of a chunking experiment: demo corpus, tiny packaged LLM."""
    from ingest.llm.local_models import TINY_MODEL_LABEL

    labels = [DEMO_LABEL] if config.demo else []
    if config.llm.tiny:
        labels.append(
            f"{TINY_MODEL_LABEL} (LLM {config.llm.model}: induced structure, A1 contexts, generated queries)."
        )
    return " ".join(labels)


def rewriting_label(con: duckdb.DuckDBPyConnection, config=None) -> str:
    """The caption label of rewriting tables: the config's tiny-model label, else the one the warehouse
    records (``corpus_meta.rewriting_tiny_model``), and the demo label of a demo experiment."""
    from ragwh.experiment.report.data import relation_exists

    labels = [DEMO_LABEL] if getattr(config, "demo", False) else []
    label = getattr(config, "tiny_model_label", None)
    if label is None and relation_exists(con, "corpus_meta"):
        tiny = con.execute(
            "SELECT count(*) FROM corpus_meta WHERE key = 'rewriting_tiny_model' AND value = 'true'"
        ).fetchone()[0]
        if tiny:
            label = "TINY-MODEL OUTPUT, NOT RESULTS: the rewrites come from the tiny packaged LLM."
    return " ".join(labels + ([label] if label else []))


def definitions_for(
    con: duckdb.DuckDBPyConnection, config, not_run: dict[str, str] | None = None
) -> list[tuple[TableDef, Context]]:
    """The tables of an experiment: a chunking config's two tables (and the rewriting ones when the warehouse
    holds the rewriting marts), a rewriting config's eight, on the primary metric the warehouse's marts were built
    with (setting rewriting_primary_metric); ``not_run`` (condition or contrast -> reason) names the
    pre-registered contrasts Table 1 lacks."""
    from ragwh.experiment.config.rewriting import RewritingConfig
    from ragwh.experiment.report.data import held_metrics, primary_cells, primary_embedder_name
    from ragwh.experiment.report.rewriting import has_rewriting
    from ragwh.experiment.tables import chunking, rewriting, slices
    from warehouse.identity import setting

    out: list[tuple[TableDef, Context]] = []
    if not isinstance(config, RewritingConfig):
        cells = primary_cells(config, primary_embedder_name(con, config))
        ctx = chunking_context(
            cells, held_metrics(con, config.primary.metric) or [config.primary.metric], chunking_label(config), not_run
        )
        out += [(d, ctx) for d in chunking.definitions(ctx) + slices.chunking_definitions(con)]
        if not has_rewriting(con):
            return out
    primary = setting(con, "rewriting_primary_metric")
    label = rewriting_label(con, config if isinstance(config, RewritingConfig) else None)
    ctx = Context(primary_metric=primary, label=label)
    return out + [(d, ctx) for d in [*rewriting.definitions(primary), *slices.rewriting_definitions(con)]]


def write_tables(tables: list[Rendered], definition: TableDef, out: Path, fmt: str) -> Path:
    """One definition's file in one format."""
    path = out / f"{definition.name}.{_EXT[fmt]}"
    if fmt == "latex":
        text = "".join(to_latex(t) for t in tables)
    elif fmt == "csv":
        text = to_csv(tables)
    else:
        text = "\n".join(to_markdown(t) for t in tables)
    path.write_text(text, encoding="utf-8")
    return path


def export_tables(
    con: duckdb.DuckDBPyConnection,
    config,
    out: str | Path,
    formats=FORMATS,
    figures: str | Path | None = None,
    not_run: dict[str, str] | None = None,
) -> Exported:
    """Write every table of the experiment in each format under ``out`` (and, with ``figures``, every report
    figure as SVG and PDF there). Tables whose mart is absent or empty are listed in ``skipped``."""
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise ValueError(f"unknown table format(s) {unknown}: use {', '.join(FORMATS)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = Exported()
    latex_inputs = []
    for definition, ctx in definitions_for(con, config, not_run):
        reason = skipped_reason(con, definition)
        tables = [] if reason else build(con, definition, ctx)
        if not tables:
            result.skipped[definition.name] = reason or "no rows for the experiment's cells"
            continue
        for fmt in formats:
            result.files.append(write_tables(tables, definition, out, fmt))
        latex_inputs.append(definition.name)
    if "latex" in formats and latex_inputs:
        path = out / "tables.tex"
        path.write_text(latex_document(latex_inputs), encoding="utf-8")
        result.files.append(path)
    if figures is not None:
        result.figures = write_figures(con, config, figures, not_run)
    return result


def write_figures(
    con: duckdb.DuckDBPyConnection, config, directory: str | Path, not_run: dict[str, str] | None = None
) -> list[Path]:
    """Every figure of the experiment's report as SVG and PDF (the report is rendered, its page discarded)."""
    from ragwh.experiment.config.rewriting import RewritingConfig
    from ragwh.experiment.report import render_report, render_rewriting_report
    from ragwh.experiment.report.data import primary_embedder_name
    from ragwh.experiment.report.markup import figures_to

    with figures_to(directory) as sink:
        if isinstance(config, RewritingConfig):
            render_rewriting_report(con, config, not_run)
        else:
            render_report(con, config, primary_embedder_name(con, config), not_run)
    return sink.written
