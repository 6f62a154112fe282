"""Slice tables, one per label (exploratory): every contrast of the primary cell sliced by the label's values
(mart contrast_slices), and the rewriting study's comparisons with S1 at seed 42 on its primary metric (mart
rewrite_slices). Columns: the contrast, the value, queries and documents, mean Δ, the study's 95% bootstrap CI,
p and Holm p within the (contrast, cell, label) family ('–' below the minimum size), and the heterogeneity p of
the contrast across the label's values (on its first row)."""

from __future__ import annotations

import duckdb

from ragwh.experiment.report.data import relation_exists
from ragwh.experiment.tables.build import column
from ragwh.experiment.tables.spec import TableDef

_COLUMNS = (
    column("contrast", "contrast", "text"),
    column("value", "value", "text"),
    column("n queries", "n_queries", "int"),
    column("n docs", "n_docs", "int"),
    column("mean Δ", "mean_delta", "delta"),
    column("95% CI", kind="ci", digits=-3, fields=("ci_low", "ci_high")),
    column("p", "p_value", "p", fields=("n_boot",)),
    column("Holm p", "p_holm", "p", fields=("n_boot", "holm_family_size")),
    column("heterogeneity p", "heterogeneity_p_first", "p", fields=("n_boot",)),
    column("", "note", "text"),
)
_CAPTION = (
    "Exploratory: the paired per-query differences of each contrast over the queries with each value of the "
    "label: mean, {ci}, p and Holm's p within the contrast's slices ('–' below the minimum size: {minimum}), and "
    "on each contrast's first row the p of the heterogeneity test (does the difference vary across the values? "
    "docs/slicing.md)."
)
_SELECT = """SELECT corpus, embedder, reranker, metric, contrast, value, n_queries, n_docs, mean_delta, ci_low, ci_high,
                    p_value, p_holm, holm_family_size, n_boot, heterogeneity_q, heterogeneity_p,
                    CASE WHEN row_number() OVER (PARTITION BY corpus, embedder, reranker, metric, contrast ORDER BY value) = 1
                         THEN heterogeneity_p END AS heterogeneity_p_first,
                    CASE WHEN below_min_size THEN 'below minimum size' ELSE '' END AS note
             FROM {mart} WHERE label = $label AND {where}
             ORDER BY corpus, embedder, reranker, metric, {order}, value"""


def _labels(con: duckdb.DuckDBPyConnection, mart: str, where: str) -> list[str]:
    if not relation_exists(con, mart):
        return []
    return [r[0] for r in con.execute(f"SELECT DISTINCT label FROM {mart} WHERE {where} ORDER BY 1").fetchall()]


def chunking_definitions(con: duckdb.DuckDBPyConnection) -> list[TableDef]:
    """One table per label of contrast_slices in the primary cell."""
    return [
        TableDef(
            name=f"slices-{label}",
            title=f"Slices by {label} (exploratory), primary cell",
            caption=_CAPTION.format(
                ci="the document-clustered bootstrap 95% CI (the contrasts' B and seed)",
                minimum="20 queries or 5 documents by default",
            ),
            requires="contrast_slices",
            sql=_SELECT.format(mart="contrast_slices", where="is_primary_cell", order="contrast"),
            params=lambda ctx, label=label: {"label": label},
            columns=_COLUMNS,
            group_by=("corpus", "embedder", "reranker", "metric"),
        )
        for label in _labels(con, "contrast_slices", "is_primary_cell")
    ]


def rewriting_definitions(con: duckdb.DuckDBPyConnection) -> list[TableDef]:
    """One table per label of rewrite_slices on the primary metric."""
    return [
        TableDef(
            name=f"rewriting-slices-{label}",
            title=f"Slices by {label} (exploratory), against S1 at seed 42",
            caption=_CAPTION.format(
                ci="the paired bootstrap 95% CI over queries (the study's B and seed)", minimum="20 queries by default"
            ),
            requires="rewrite_slices",
            sql=_SELECT.format(
                mart="rewrite_slices",
                where="is_primary_metric",
                order="CASE kind WHEN 'solo' THEN 0 WHEN 'ensemble' THEN 1 ELSE 2 END, contrast",
            ),
            params=lambda ctx, label=label: {"label": label},
            columns=_COLUMNS,
            group_by=("corpus", "embedder", "reranker", "metric"),
        )
        for label in _labels(con, "rewrite_slices", "is_primary_metric")
    ]
