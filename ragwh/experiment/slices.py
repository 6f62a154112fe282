"""A contrast sliced by a label (marts contrast_slices and rewrite_slices): the rows `ragwh slice`, the report's
slices section and `ragwh export tables` show, and the forest plot of one sliced contrast.

Which mart: a contrast of the chunking study (C1-C4, a declared contrast) is read from ``contrast_slices``, a
strategy, ensemble or ``router`` of the rewriting study from ``rewrite_slices``. Which cell: the filters given
(corpus, embedder, reranker, metric); without a metric, the chunking study's pre-registered primary cell
(``is_primary_cell``) or the rewriting study's primary metric (``is_primary_metric``: the setting
rewriting_primary_metric the mart was built with), so one call names one cell whenever the warehouse has one
experiment's runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

#: the columns both slice marts carry, in display order
COLUMNS = (
    "contrast",
    "corpus",
    "embedder",
    "reranker",
    "metric",
    "label",
    "value",
    "n_queries",
    "n_docs",
    "mean_delta",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "holm_family_size",
    "below_min_size",
    "n_boot",
    "cell_mean_delta",
    "cell_n_queries",
    "heterogeneity_q",
    "heterogeneity_p",
    "heterogeneity_n_slices",
)
MARTS = ("contrast_slices", "rewrite_slices")


class SliceError(ValueError):
    """No such contrast or label in the slice marts (one line: what there is)."""


@dataclass(frozen=True)
class SlicedContrast:
    """One contrast in one cell sliced by one label: its rows in value order."""

    mart: str
    contrast: str
    corpus: str
    embedder: str
    reranker: str
    metric: str
    label: str
    rows: tuple[dict, ...]

    @property
    def title(self) -> str:
        return f"{self.contrast} by {self.label} · {self.metric}"

    @property
    def heterogeneity(self) -> dict:
        return {k: self.rows[0][k] for k in ("heterogeneity_q", "heterogeneity_p", "heterogeneity_n_slices", "n_boot")}


def _exists(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(
        con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = ?", [table]
        ).fetchone()[0]
    )


def mart_of(con: duckdb.DuckDBPyConnection, contrast: str) -> str:
    """The slice mart holding ``contrast``; :class:`SliceError` naming the contrasts there are otherwise."""
    known: list[str] = []
    for mart in MARTS:
        if not _exists(con, mart):
            continue
        names = [r[0] for r in con.execute(f"SELECT DISTINCT contrast FROM {mart} ORDER BY 1").fetchall()]
        if contrast in names:
            return mart
        known += names
    if not known:
        raise SliceError(
            "no slice mart is built: run `ragwh run` (or `dbt build --select +contrast_slices +rewrite_slices`) first"
        )
    raise SliceError(f"no contrast {contrast!r} in the slice marts; there are: {', '.join(known)}")


def sliced(
    con: duckdb.DuckDBPyConnection,
    contrast: str,
    label: str | None = None,
    *,
    metric: str | None = None,
    corpus: str | None = None,
    embedder: str | None = None,
    reranker: str | None = None,
) -> list[SlicedContrast]:
    """Every (cell, label) of ``contrast`` matching the filters, as :class:`SlicedContrast` (cells and labels in
    order); ``label`` None: every label. Without ``metric`` the primary cell (module doc)."""
    mart = mart_of(con, contrast)
    where, params = ["contrast = ?"], [contrast]
    for column, value in (("label", label), ("metric", metric), ("corpus", corpus), ("reranker", reranker)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if embedder is not None:  # a bare model name matches it at any precision
        where.append("(embedder = ? OR split_part(embedder, '@', 1) = ?)")
        params += [embedder, embedder]
    if metric is None:
        where.append("is_primary_cell" if mart == "contrast_slices" else "is_primary_metric")
    cur = con.execute(
        f"SELECT {', '.join(COLUMNS)} FROM {mart} WHERE {' AND '.join(where)} "
        "ORDER BY corpus, embedder, reranker, metric, label, value",
        params,
    )
    rows = [dict(zip(COLUMNS, r)) for r in cur.fetchall()]
    if not rows:
        labels = [
            r[0]
            for r in con.execute(
                f"SELECT DISTINCT label FROM {mart} WHERE contrast = ? ORDER BY 1", [contrast]
            ).fetchall()
        ]
        if label is not None and label not in labels:
            raise SliceError(
                f"no label {label!r} for {contrast}; its labels: {', '.join(labels)} (add one with "
                "`ragwh label add FILE.csv --on queries|documents`, then rebuild)"
            )
        raise SliceError(
            f"no slices of {contrast} match the filters" + ("" if metric else " (no primary cell: name a --metric)")
        )
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        out.setdefault((r["corpus"], r["embedder"], r["reranker"], r["metric"], r["label"]), []).append(r)
    return [SlicedContrast(mart, contrast, *key, tuple(group)) for key, group in out.items()]


def forest(s: SlicedContrast):
    """The forest plot of one sliced contrast (the report's figure style: one column wide, mean Δ with its 95%
    clustered CI per value, the whole cell on top, a slice below the minimum size hollow and grey)."""
    import matplotlib.pyplot as plt

    from ragwh.experiment.report.markup import PAPER_WIDTH, p_text

    entries = [("all queries", s.rows[0]["cell_mean_delta"], None, None, True, s.rows[0]["cell_n_queries"])]
    entries += [
        (str(r["value"]), r["mean_delta"], r["ci_low"], r["ci_high"], not r["below_min_size"], r["n_queries"])
        for r in s.rows
    ]
    fig, ax = plt.subplots(figsize=(PAPER_WIDTH, 0.6 + 0.2 * len(entries)))
    for i, (_, m, lo, hi, full, _) in enumerate(entries):
        y = len(entries) - i
        color = "#34495e" if full else "#95a5a6"
        if i == 0:
            color = "#b03a2e"
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [y, y], color=color, lw=1.2)
        ax.plot([m], [y], "D" if i == 0 else "o", color=color, mfc=color if full else "white", ms=4)
    ax.axvline(0, ls="--", color="grey", lw=0.8)
    ax.set_yticks(range(len(entries), 0, -1), [f"{e[0]} (n={e[5]})" for e in entries], fontsize=6.5)
    ax.set_ylim(0.4, len(entries) + 0.6)
    h = s.heterogeneity
    het = (
        ("heterogeneity p " + p_text(h["heterogeneity_p"], h["n_boot"]))
        if h["heterogeneity_p"] is not None
        else "heterogeneity: fewer than 2 testable slices"
    )
    ax.set_title(f"{s.title} (exploratory; {het})", fontsize=7, loc="left", pad=2)
    ax.tick_params(axis="x", labelsize=6.5)
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel(
        "mean Δ (treatment − control), 95% clustered CI"
        if s.mart == "contrast_slices"
        else "mean Δ against the baseline, 95% CI",
        fontsize=7,
    )
    fig.tight_layout()
    return fig


def figure_stem(s: SlicedContrast, several_cells: bool) -> str:
    from ragwh.experiment.report.markup import figure_name

    cell = f"-{s.corpus}-{s.embedder}-{s.reranker}" if several_cells else ""
    return figure_name(f"slice-{s.contrast}-{s.label}-{s.metric}{cell}")
