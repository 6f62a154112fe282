"""The chunking study's paper tables (arXiv 2610.10170): Table 1, the pre-registered contrasts of the primary
cell; Table 2, per-condition means with their 95% document-clustered intervals, metrics as columns."""

from __future__ import annotations

from ragwh.experiment.tables.build import column
from ragwh.experiment.tables.spec import Pivot, TableDef

TABLE1 = TableDef(
    name="chunking-table1",
    title="Table 1: pre-registered contrasts, primary cell",
    caption=(
        "Paired per-query differences (treatment − control) of the primary metric: their mean, the "
        "document-clustered bootstrap 95% CI, Holm's p across the contrast family of the cell (a bootstrap p of "
        "0 is shown as < m/B), Cohen's dz, and the queries and documents paired."
    ),
    requires="contrasts",
    sql="""SELECT c.corpus, c.embedder, c.reranker, c.metric, c.contrast, c.treatment || ' − ' || c.control AS arms,
                  c.n_queries, c.n_docs, c.mean_delta, c.ci_low, c.ci_high, c.p_value, c.p_holm, c.family_size, c.dz,
                  c.n_boot, c.n_far_side
           FROM contrasts c WHERE c.is_primary ORDER BY c.corpus, c.embedder, c.reranker, c.metric, c.contrast""",
    columns=(
        column("contrast", "contrast", "text"),
        column("arms", "arms", "text"),
        column("n queries", "n_queries", "int"),
        column("n docs", "n_docs", "int"),
        column("mean Δ", "mean_delta", "delta"),
        column("95% CI", kind="ci", digits=-3, fields=("ci_low", "ci_high")),
        column("Holm p", "p_holm", "p", fields=("n_boot", "family_size")),
        column("dz", "dz", digits=2),
    ),
    group_by=("corpus", "embedder", "reranker", "metric"),
    marker=lambda r: "★ ",
)


def _metric_order(ctx_metrics: tuple[str, ...]):
    def values(rows: list[dict]) -> list[str]:
        present = {r["metric"] for r in rows}
        return [m for m in ctx_metrics if m in present] + sorted(present - set(ctx_metrics))

    return values


def table2(ctx) -> TableDef:
    """Table 2 for the context's primary cells (rows in the conditions seed's order, metrics primary first)."""
    return TableDef(
        name="chunking-table2",
        title="Table 2: per-condition means",
        caption=(
            "Mean of each metric over the queries scored per condition, with its 95% document-clustered "
            "bootstrap interval (documents resampled, the contrasts' B and seed); bold: the best condition per "
            "metric."
        ),
        requires="condition_means",
        sql="""SELECT m.corpus, m.embedder, m.reranker, m.condition, m.metric, m.n_queries, m.n_docs, m.mean_value,
                      m.sd_value, m.ci_low, m.ci_high, m.n_boot
               FROM condition_means m
               JOIN (SELECT unnest($corpora) AS corpus, unnest($embedders) AS embedder, unnest($rerankers) AS reranker) c
                 USING (corpus, embedder, reranker)
               ORDER BY m.corpus, m.embedder, m.reranker, coalesce(list_position($conditions, m.condition), 999),
                        m.condition, m.metric""",
        params=lambda c: {
            "corpora": [x[0] for x in c.cells],
            "embedders": [x[1] for x in c.cells],
            "rerankers": [x[2] for x in c.cells],
            "conditions": list(c.conditions),
        },
        columns=(
            column("condition", "condition", "text"),
            column("n queries", "n_queries", "int"),
            column("n docs", "n_docs", "int"),
        ),
        pivot=Pivot(
            "metric",
            ("condition",),
            column("", kind="mean_ci", fields=("mean_value", "ci_low", "ci_high"), best="max"),
            _metric_order(ctx.metrics),
        ),
    )


def definitions(ctx) -> list[TableDef]:
    return [TABLE1, table2(ctx)]
