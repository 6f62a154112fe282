"""``ragwh slice --contrast C2 --by query_type``: one contrast sliced by one label, with its uncertainty (marts
contrast_slices / rewrite_slices), as a table or CSV, and its forest plot as SVG and PDF."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table


def slice_command(
    contrast: str = typer.Option(
        ...,
        "--contrast",
        help="C1-C4 or a declared contrast (chunking); a strategy, an "
        "ensemble such as 'S1+Q2D' or the router 'router:Q2D' (rewriting)",
    ),
    by: str = typer.Option(..., "--by", help="the label: query_type, topic_bucket, doc_length, ... or an analyst's"),
    metric: Optional[str] = typer.Option(None, "--metric", help="metric (default: the primary cell's)"),
    corpus: Optional[str] = typer.Option(None, "--corpus", help="only this corpus"),
    embedder: Optional[str] = typer.Option(
        None, "--embedder", help="only this system (a bare model name: any precision)"
    ),
    reranker: Optional[str] = typer.Option(None, "--reranker", help="only this reranker ('none': first stage)"),
    as_csv: bool = typer.Option(False, "--csv", help="print every column of the selected rows as CSV on stdout"),
    figures: Optional[Path] = typer.Option(
        None, "--figures", help="where the forest plots go (default reports/slices)"
    ),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE)"),
) -> None:
    """Print the slice table of a contrast by a label (exploratory: mean Δ, the study's bootstrap 95% CI, p, Holm p
    within the label's slices, the minimum-size flag, the heterogeneity test) and write its forest plot."""
    import matplotlib

    matplotlib.use("Agg")
    from ragwh.experiment.report.markup import figures_to, p_text, svg
    from ragwh.experiment.slices import COLUMNS, SliceError, figure_stem, forest, sliced
    from warehouse.db import connect
    from warehouse.paths import reports_dir

    con = connect(warehouse, create=False, read_only=True)
    try:
        groups = sliced(con, contrast, by, metric=metric, corpus=corpus, embedder=embedder, reranker=reranker)
    except SliceError as exc:
        Console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        con.close()
    out = figures if figures is not None else reports_dir() / "slices"
    with figures_to(out) as sink:
        for g in groups:
            svg(forest(g), figure_stem(g, len(groups) > 1))
    if as_csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(COLUMNS)
        writer.writerows([r[c] for c in COLUMNS] for g in groups for r in g.rows)
        return
    console = Console()
    for g in groups:
        n_boot = g.rows[0]["n_boot"]
        table = Table(
            "value",
            "queries",
            "docs",
            "mean Δ",
            "95% CI",
            "p",
            "Holm p",
            "",
            title=escape(f"{g.title} — {g.corpus} · {g.embedder} · reranker {g.reranker} (exploratory)"),
        )
        table.add_row(
            "all queries", str(g.rows[0]["cell_n_queries"]), "", f"{g.rows[0]['cell_mean_delta']:+.3f}", "", "", "", ""
        )
        for r in g.rows:
            table.add_row(
                escape(str(r["value"])),
                str(r["n_queries"]),
                str(r["n_docs"]) if r["n_docs"] else "–",
                f"{r['mean_delta']:+.3f}",
                f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]",
                p_text(r["p_value"], n_boot),
                p_text(r["p_holm"], n_boot, r["holm_family_size"] or 1),
                "below minimum size: no p" if r["below_min_size"] else "",
            )
        console.print(table)
        h = g.heterogeneity
        console.print(
            escape(
                f"heterogeneity across {by}: Q = {h['heterogeneity_q']:.3g}, p = {p_text(h['heterogeneity_p'], n_boot)} over "
                f"{h['heterogeneity_n_slices']} slices (B = {n_boot:,})"
                if h["heterogeneity_p"] is not None
                else f"heterogeneity across {by}: not tested (fewer than 2 slices meet the minimum size)"
            ),
            soft_wrap=True,
        )
    console.print(
        escape(f"forest plots: {', '.join(str(p) for p in sink.written if p.suffix == '.svg')} (and .pdf)"),
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("slice")(slice_command)
