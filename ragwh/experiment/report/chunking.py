"""The chunking study's report sections: contrasts, truncation, exclusions and index coverage, forest plot,
means, dose-response, cuts, token budget, section recall, funnel, size matching and what did not run."""

from __future__ import annotations

import html
import re

import duckdb

from ragwh.experiment.config.chunking import ExperimentConfig
from ragwh.experiment.report.data import Cell, condition_order, fetch_rows, mart
from ragwh.experiment.report.markup import PAPER_WIDTH, figure_name, fmt, fmt_p, html_table, not_run_note, section, svg

#: (family, treatment conditions by prefix depth 0..3) for the dose-response figure.
DOSE_FAMILIES = (("induced (A)", ("A2", "A3-d1", "A3-d2", "A3")), ("gold (G)", ("G2", "G3-d1", "G3-d2", "G3")))
_BUDGET = re.compile(r"(?i)(tbc|budget|token)[^@]*@(\d+)")


def _contrast_table(rows: list[dict]) -> str:
    headers = ["contrast", "arms", "question", "n queries", "n docs", "mean Δ", "95% CI", "p", "Holm p", "dz"]
    out = []
    for r in rows:
        label = ("★ " if r.get("is_primary") else "") + html.escape(r["contrast"])
        out.append(
            [
                label,
                html.escape(r["arms"]),
                html.escape(r["question"]),
                fmt(r.get("n_queries")),
                fmt(r.get("n_docs")),
                fmt(r.get("mean_delta"), 4),
                f"[{fmt(r.get('ci_low'), 4)}, {fmt(r.get('ci_high'), 4)}]",
                fmt_p(r.get("p_value"), r.get("n_boot")),
                fmt_p(r.get("p_holm"), r.get("n_boot"), r.get("family_size") or 1),
                fmt(r.get("dz")),
            ]
        )
    return html_table(headers, out, "contrasts")


def section_contrasts(
    rows: list[dict],
    config: ExperimentConfig,
    not_run: dict[str, str],
    mixed: list[dict],
    con: duckdb.DuckDBPyConnection | None = None,
) -> str:
    what = (
        "Pre-registered contrasts: paired per-query differences (treatment − control) of the primary metric, "
        "their mean, a document-clustered bootstrap 95% CI and two-sided p "
        f"(B = {config.bootstrap_b:,}, seed {config.bootstrap_seed}; p = 0, no replicate on the far side of zero, "
        "is shown as < 1/B, and its Holm adjustment over m contrasts as < m/B), Holm-adjusted p across the contrast "
        "family of the cell, and Cohen's dz. ★ marks the primary cell fixed before the runs (its table is the study's "
        "Table 1 as `ragwh export tables` writes it, showing the Holm p); every other cell is exploratory, and "
        "contrasts an experiment declares (between systems or conditions) form their own Holm family."
    )
    missing = {k: v for k, v in not_run.items() if re.fullmatch(r"C\d+", k)}
    notes = "".join(f"<li>{html.escape(k)}: not run — {html.escape(v)}</li>" for k, v in sorted(missing.items()))
    notes = f"<ul class='notrun'>{notes}</ul>" if notes else ""
    if not rows:
        return section(
            "contrasts",
            "Primary cell: contrasts",
            what,
            not_run_note("the contrasts mart is empty or absent (dbt evaluation models not built)") + notes,
        )
    primary = [r for r in rows if r.get("is_primary")]
    body = _table_or_note(primary, "no row of the contrasts mart is marked is_primary", con)
    if primary and mixed:
        table = [
            [
                html.escape(r["contrast"]),
                fmt(r.get("mde"), 4),
                fmt(r.get("mixed_coef"), 4),
                f"[{fmt(r.get('mixed_ci_low'), 4)}, {fmt(r.get('mixed_ci_high'), 4)}]",
                fmt_p(r.get("mixed_p_value")),
                "yes" if r.get("mixed_converged") else "no",
            ]
            for r in mixed
        ]
        body += (
            "<p class='what'>Secondary checks for the primary cell: the minimum detectable effect (80% power, "
            "α = 0.05, from the bootstrap spread) and a MixedLM (score ~ condition, random intercept per document).</p>"
            + html_table(["contrast", "MDE", "MixedLM coef", "MixedLM 95% CI", "MixedLM p", "converged"], table)
        )
    exploratory = [r for r in rows if not r.get("is_primary")]
    cells: dict[tuple, list[dict]] = {}
    for r in exploratory:
        key = (r["corpus"], r["embedder"], r["reranker"], r["metric"])
        if r.get("family") == "declared":
            key += ("declared",)
        cells.setdefault(key, []).append(r)
    more = "".join(
        f"<h3>{html.escape(' · '.join(map(str, key)))}</h3>" + _contrast_table(group) for key, group in cells.items()
    )
    body += notes
    if more:
        body += (
            "<h3 class='sub'>Exploratory cells</h3>" + f"<details><summary>{len(cells)} cells</summary>{more}</details>"
        )
    return section("contrasts", "Primary cell: contrasts", what, body)


def _table_or_note(primary: list[dict], note: str, con: duckdb.DuckDBPyConnection | None = None) -> str:
    """The primary cell's contrasts: the study's Table 1 (the same numbers `ragwh export tables` writes)."""
    if not primary:
        return not_run_note(note)
    if con is not None:
        from ragwh.experiment.tables.build import Context, build
        from ragwh.experiment.tables.chunking import TABLE1
        from ragwh.experiment.tables.render import to_html

        tables = build(con, TABLE1, Context())
        if tables:
            return "".join(
                f"<h3>★ {html.escape(' · '.join(map(str, t.group.values())))}</h3>" + to_html(t, "contrasts")
                for t in tables
            )
    r0 = primary[0]
    cell = f"{r0['corpus']} · {r0['embedder']} · reranker {r0['reranker']} · {r0['metric']}"
    return f"<h3>★ {html.escape(cell)}</h3>" + _contrast_table(primary)


def section_truncation(rows: list[dict]) -> str:
    what = (
        "Condition texts longer than the embedder's window (all-MiniLM-L6-v2 reads 254 text tokens of 256, bge "
        "510 of 512): the model never reads their end, always content (prefixes come first), so prefix conditions "
        "lose more content than bare ones. Read the contrasts with it: a prefix that pushes content out of the "
        "window costs the treatment arm. From the embedding_truncation mart."
    )
    if not rows:
        return section(
            "truncation",
            "Truncation by the embedder's window",
            what,
            not_run_note("no embedding_truncation rows (no first-stage runs, or the mart was not built)"),
        )
    order = {c: i for i, c in enumerate(condition_order())}
    rows = sorted(rows, key=lambda r: (r["corpus"], r["embedder"], order.get(r["condition"], 99)))
    table = [
        [
            fmt(r["corpus"]),
            fmt(r["embedder"]),
            fmt(r["condition"]),
            fmt(r["max_tokens"]),
            fmt(r["n_texts"]),
            fmt(r["n_truncated"]),
            fmt(100 * r["share_truncated"], 1) + "%",
            fmt(r["tokens_cut"]),
            ("–" if r["content_share_cut"] is None else fmt(100 * r["content_share_cut"], 2) + "%"),
            fmt(r["mean_cut_when_truncated"], 1),
            fmt(r["n_uncounted"]),
        ]
        for r in rows
    ]
    return section(
        "truncation",
        "Truncation by the embedder's window",
        what,
        html_table(
            [
                "corpus",
                "embedder",
                "condition",
                "window",
                "texts",
                "truncated",
                "share",
                "tokens cut",
                "content cut",
                "mean cut (truncated)",
                "not counted",
            ],
            table,
        ),
    )


def section_exclusions(con: duckdb.DuckDBPyConnection, cells: list[Cell]) -> str:
    what = (
        "One corpus per run: every condition indexes every document of the corpus; a document lacking a "
        "condition's structure (its induced structure failed verification) is indexed with its fixed windows "
        "(fallback) and its queries are excluded from every arm (structure_fallback). The first table is the "
        "condition_index mart, the second the evaluation funnel (evaluation_exclusions: queries, their documents "
        "in brackets) of the primary embedder and reranker."
    )
    index = mart(con, "condition_index", "ORDER BY corpus, condition")
    funnel = [
        r
        for r in mart(con, "evaluation_exclusions")
        if any((r["corpus"], r["embedder"], r["reranker"]) == (c.corpus, c.embedder, c.reranker) for c in cells)
    ]
    if not index and not funnel:
        return section(
            "exclusions",
            "Index coverage and evaluation exclusions",
            what,
            not_run_note("condition_index and evaluation_exclusions are empty or absent"),
        )
    order = {c: i for i, c in enumerate(condition_order())}
    body = ""
    if index:
        index.sort(key=lambda r: (r["corpus"], order.get(r["condition"], 99)))
        body += html_table(
            ["corpus", "condition", "documents", "chunks", "fallback documents", "fallback chunks"],
            [
                [
                    fmt(r["corpus"]),
                    fmt(r["condition"]),
                    fmt(r["n_docs"]),
                    fmt(r["n_chunks"]),
                    fmt(r["n_fallback_docs"]),
                    fmt(r["n_fallback_chunks"]),
                ]
                for r in index
            ],
        )
    if funnel:
        reasons = sorted({r["reason"] for r in funnel}, key=lambda x: (x != "scored", x))
        value = {(r["corpus"], r["condition"], r["reason"]): r for r in funnel}
        keys = sorted({(r["corpus"], r["condition"]) for r in funnel}, key=lambda k: (k[0], order.get(k[1], 99)))
        body += html_table(
            ["corpus", "condition", *reasons],
            [
                [fmt(c), fmt(cond)]
                + [
                    (f"{value[(c, cond, x)]['n_queries']} <small>({value[(c, cond, x)].get('n_docs', 0)})</small>")
                    if (c, cond, x) in value
                    else "–"
                    for x in reasons
                ]
                for c, cond in keys
            ],
            "means",
        )
    return section("exclusions", "Index coverage and evaluation exclusions", what, body)


def short_system(name: str) -> str:
    """A system's short label for figures: the model's last path component, without its precision."""
    return name.split("@", 1)[0].rsplit("/", 1)[-1]


def section_forest(rows: list[dict], primary_metric: str = "cov-nDCG@10") -> str:
    what = (
        "Every contrast in every cell as a point (mean Δ) with its 95% bootstrap CI, one panel per metric (the "
        "primary metric first); the dashed line is no difference, filled markers are the primary cell, hollow ones "
        "exploratory."
    )
    if not rows:
        return section("forest", "Forest plot of all contrasts", what, not_run_note("no contrasts were computed"))
    import matplotlib.pyplot as plt

    metrics = sorted({r["metric"] for r in rows}, key=lambda m: (m != primary_metric, m))
    several = {k: len({r[k] for r in rows}) > 1 for k in ("corpus", "embedder", "reranker")}

    def label(r: dict) -> str:
        parts = [r["contrast"]]
        if several["embedder"] or r.get("control_embedder", r["embedder"]) != r["embedder"]:
            system = short_system(r["embedder"])
            if r.get("control_embedder", r["embedder"]) != r["embedder"]:
                system += " vs " + short_system(r["control_embedder"])
            parts.append(system)
        if several["reranker"] and r["reranker"] != "none":
            parts.append("+" + short_system(r["reranker"]))
        if several["corpus"]:
            parts.append(r["corpus"])
        return " · ".join(parts)

    panels = [[r for r in rows if r["metric"] == m] for m in metrics]
    heights = [0.5 + 0.17 * len(p) for p in panels]
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(PAPER_WIDTH, sum(heights) + 0.4), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    for ax, metric, panel in zip(axes[:, 0], metrics, panels):
        for i, r in enumerate(panel):
            y = len(panel) - i
            lo, hi, m = r.get("ci_low"), r.get("ci_high"), r.get("mean_delta")
            color = "#b03a2e" if r.get("is_primary") else "#34495e"
            if lo is not None and hi is not None:
                ax.plot([lo, hi], [y, y], color=color, lw=1.2)
            ax.plot([m], [y], "o", color=color, mfc=color if r.get("is_primary") else "white", ms=4)
        ax.axvline(0, ls="--", color="grey", lw=0.8)
        ax.set_yticks(range(len(panel), 0, -1), [label(r) for r in panel], fontsize=6.5)
        ax.set_ylim(0.4, len(panel) + 0.6)
        ax.set_title(metric, fontsize=7.5, loc="left", pad=2)
        ax.tick_params(axis="x", labelsize=6.5)
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("mean Δ (treatment − control), 95% CI", fontsize=7)
    fig.tight_layout(h_pad=0.6)
    return section("forest", "Forest plot of all contrasts", what, svg(fig, "chunking-forest"))


def section_means(
    con: duckdb.DuckDBPyConnection, cells: list[Cell], metrics: list[str], not_run: dict[str, str]
) -> str:
    what = (
        "Mean of each metric per condition over the queries scored, with its 95% document-clustered bootstrap "
        "interval (rows: conditions in the order of the conditions seed; columns: metrics; the study's Table 2, the "
        "same numbers `ragwh export tables` writes), for the primary embedder and reranker; bold: the best condition."
    )
    from ragwh.experiment.tables import chunking_context
    from ragwh.experiment.tables.build import build
    from ragwh.experiment.tables.chunking import table2
    from ragwh.experiment.tables.render import to_html

    ctx = chunking_context(cells, metrics)
    tables = build(con, table2(ctx), ctx)
    if not tables:
        return section(
            "means", "Per-condition means", what, not_run_note("the condition_means mart is empty or absent")
        )
    order = {c: i for i, c in enumerate(condition_order())}
    body = "".join(
        f"<h3>{html.escape(' · '.join(map(str, t.group.values())))}</h3>" + to_html(t, "means") for t in tables
    )
    have = {tuple(t.group.values()) for t in tables}
    body += "".join(
        not_run_note(f"no scored queries for {c.corpus} · {c.embedder} · {c.reranker}")
        for c in cells
        if (c.corpus, c.embedder, c.reranker) not in have
    )
    absent = [
        f"{c} ({html.escape(r)})" for c, r in sorted(not_run.items(), key=lambda kv: order.get(kv[0], 99)) if c in order
    ]
    if absent:
        body += "<p class='notrun'>Conditions not run: " + "; ".join(absent) + "</p>"
    return section("means", "Per-condition means", what, body)


def section_dose(means: list[dict], cells: list[Cell], metric: str, slopes: list[dict]) -> str:
    what = (
        f"Mean {metric} against heading-path depth (0 = no prefix, 1 = [Title], 2 = [Title › Section], 3 = full "
        "path) for induced and gold structure; bars are the 95% document-clustered bootstrap intervals of the means. The table gives the "
        "mean per-query slope (metric points per depth level) with its document-clustered bootstrap CI and p."
    )
    import matplotlib.pyplot as plt

    figs = ""
    for cell in cells:
        sub = {
            m["condition"]: m
            for m in means
            if m["metric"] == metric
            and (m["corpus"], m["embedder"], m["reranker"]) == (cell.corpus, cell.embedder, cell.reranker)
        }
        fams = [(name, [(d, sub[c]) for d, c in enumerate(conds) if c in sub]) for name, conds in DOSE_FAMILIES]
        fams = [(n, pts) for n, pts in fams if len(pts) >= 2]
        if not fams:
            continue
        fig, ax = plt.subplots(figsize=(PAPER_WIDTH, 2.3))
        for (name, pts), color in zip(fams, ("#1f77b4", "#d35400")):
            means = [p["mean"] for _, p in pts]
            err = [
                [m - p["ci_low"] for m, (_, p) in zip(means, pts)],
                [p["ci_high"] - m for m, (_, p) in zip(means, pts)],
            ]
            ax.errorbar(
                [d for d, _ in pts], means, yerr=err, marker="o", ms=3.5, capsize=2, lw=1, label=name, color=color
            )
        ax.set_xticks([0, 1, 2, 3])
        ax.set_xlabel("prefix depth", fontsize=7)
        ax.set_ylabel(metric, fontsize=7)
        ax.tick_params(labelsize=6.5)
        ax.set_title(f"{cell.corpus} · {short_system(cell.embedder)}", fontsize=7.5)
        ax.legend(fontsize=6.5)
        ax.grid(alpha=0.3)
        figs += svg(fig, figure_name(f"chunking-dose-{cell.corpus}-{short_system(cell.embedder)}"))
    body = figs or not_run_note(f"fewer than two depths of a family have {metric} scores")
    if slopes:
        table = [
            [
                fmt(r["family"]),
                fmt(r["corpus"]),
                fmt(r["embedder"]),
                fmt(r["reranker"]),
                fmt(r["metric"]),
                fmt(r["n_queries"]),
                fmt(r["n_docs"]),
                fmt(r["slope"], 4),
                f"[{fmt(r['ci_low'], 4)}, {fmt(r['ci_high'], 4)}]",
                fmt_p(r["p_value"], r.get("n_boot")),
            ]
            for r in slopes
        ]
        body += html_table(
            ["family", "corpus", "embedder", "reranker", "metric", "n queries", "n docs", "slope", "95% CI", "p"], table
        )
    return section("dose", "Dose-response over prefix depth", what, body)


def section_cuts(con: duckdb.DuckDBPyConnection, cells: list[Cell], metric: str) -> str:
    what = (
        f"Mean {metric} per condition within each query type (extractive / abstractive / boolean / ...) and, "
        "where the corpus has topic buckets, within each topic: where a treatment helps, not just whether."
    )
    body = ""
    order = {c: i for i, c in enumerate(condition_order())}
    cuts = mart(con, "metric_cuts")
    if not cuts:
        return section(
            "cuts", "Per-query-type and per-topic cuts", what, not_run_note("the metric_cuts mart is empty or absent")
        )
    for column, label in (("query_type", "query type"), ("topic_bucket", "topic")):
        rows = [
            {**r, column: r["cut_value"], "mean": r["mean_value"], "n": r["n_queries"]}
            for r in cuts
            if r["cut"] == column
            and r["metric"] == metric
            and any((r["corpus"], r["embedder"], r["reranker"]) == (c.corpus, c.embedder, c.reranker) for c in cells)
        ]
        groups = sorted({r[column] for r in rows})
        if not rows or groups == ["(none)"]:
            body += f"<h3>By {label}</h3>" + not_run_note(f"no {label} labels in the scored corpora")
            continue
        conds = sorted({r["condition"] for r in rows}, key=lambda c: order.get(c, 99))
        value = {(r["corpus"], r["condition"], r[column]): r for r in rows}
        for corpus in sorted({r["corpus"] for r in rows}):
            table = [
                [html.escape(c)]
                + [
                    (fmt(value[(corpus, c, g)]["mean"]) + f" <small>({value[(corpus, c, g)]['n']})</small>")
                    if (corpus, c, g) in value
                    else "–"
                    for g in groups
                ]
                for c in conds
            ]
            body += f"<h3>By {label} · {html.escape(corpus)}</h3>" + html_table(["condition", *groups], table, "means")
    return section("cuts", "Per-query-type and per-topic cuts", what, body)


def section_budget(means: list[dict], cells: list[Cell]) -> str:
    what = (
        "Share of gold evidence characters inside the context a reader gets when chunks are taken in rank order "
        "up to a token budget (content + prefix tokens: prefixes pay their real cost); solid lines induced (A), "
        "dashed gold (G), dotted the placebo."
    )
    import matplotlib.pyplot as plt

    order = {c: i for i, c in enumerate(condition_order())}
    figs = ""
    for cell in cells:
        sub = [
            m
            for m in means
            if (m["corpus"], m["embedder"], m["reranker"]) == (cell.corpus, cell.embedder, cell.reranker)
            and _BUDGET.search(m["metric"])
        ]
        if not sub:
            continue
        fig, ax = plt.subplots(figsize=(PAPER_WIDTH, 2.6))
        colours = plt.get_cmap("tab20").colors
        for i, cond in enumerate(sorted({m["condition"] for m in sub}, key=lambda c: order.get(c, 99))):
            pts = sorted((int(_BUDGET.search(m["metric"]).group(2)), m["mean"]) for m in sub if m["condition"] == cond)
            style = "-" if cond.startswith("A") else "--" if cond.startswith("G") else ":"  # induced / gold / other
            ax.plot(
                [b for b, _ in pts],
                [v for _, v in pts],
                style,
                marker="o",
                ms=3,
                lw=1,
                label=cond,
                color=colours[i % 20],
            )
        ax.set_xscale("log", base=2)
        budgets = sorted({int(_BUDGET.search(m["metric"]).group(2)) for m in sub})
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.set_xlabel("token budget (content + prefix tokens)", fontsize=7)
        ax.set_ylabel("evidence coverage", fontsize=7)
        ax.tick_params(labelsize=6.5)
        ax.set_title(f"{cell.corpus} · {short_system(cell.embedder)}", fontsize=7.5)
        ax.legend(fontsize=5.5, ncol=3)
        ax.grid(alpha=0.3)
        figs += svg(fig, figure_name(f"chunking-budget-{cell.corpus}-{short_system(cell.embedder)}"))
    return section(
        "budget", "Token-budget curves", what, figs or not_run_note("no token-budget metrics in query_metrics")
    )


def section_routing(con: duckdb.DuckDBPyConnection) -> str:
    what = (
        "Two-stage retrieval keeps the 5 best top-level sections before ranking chunks; section recall is the share "
        "of judged queries (those with chunk-level evidence) for which a kept section overlaps the gold evidence."
    )
    rows = mart(con, "section_recall_summary", "ORDER BY corpus, embedder, condition")
    if not rows:
        return section(
            "routing",
            "Two-stage section recall",
            what,
            not_run_note("no two-stage runs (A4, G4) were scored (section_recall_summary is empty or absent)"),
        )
    table = [
        [
            fmt(r["corpus"]),
            fmt(r["embedder"]),
            fmt(r["condition"]),
            fmt(r["n_queries"]),
            fmt(r["n_judged"]),
            fmt(r["n_recalled"]),
            fmt(r["section_recall"]),
        ]
        for r in rows
    ]
    return section(
        "routing",
        "Two-stage section recall",
        what,
        html_table(["corpus", "embedder", "condition", "queries", "judged", "recalled", "section recall"], table),
    )


def section_funnel(con: duckdb.DuckDBPyConnection, corpora: list[str]) -> str:
    """The funnel of the experiment's ``corpora`` (other corpora in the warehouse are not its data)."""
    what = (
        "Every record the loaders read and what happened to it: inputs, what was kept, and each reason items "
        "were dropped (nothing is filtered silently). The figure shows the question funnel."
    )
    rows = fetch_rows(
        con,
        "SELECT corpus, stage, reason, n FROM funnel WHERE list_contains(?, corpus) "
        "ORDER BY corpus, stage, reason = 'input' DESC, reason = 'kept' DESC, reason",
        [corpora],
    )
    if not rows:
        return section("funnel", "Data funnel", what, not_run_note("the funnel table is empty (nothing was ingested)"))
    import matplotlib.pyplot as plt

    table = [[fmt(r["corpus"]), fmt(r["stage"]), fmt(r["reason"]), fmt(r["n"])] for r in rows]
    body = ""
    questions = [r for r in rows if r["stage"] == "questions" and r["n"]]
    if questions:
        fig, ax = plt.subplots(figsize=(PAPER_WIDTH, 0.2 * len(questions) + 0.6))
        labels = [f"{r['corpus']}: {r['reason']}" for r in questions]
        ax.barh(range(len(questions))[::-1], [r["n"] for r in questions], color="#5d6d7e")
        ax.set_yticks(range(len(questions))[::-1], labels, fontsize=6.5)
        ax.tick_params(axis="x", labelsize=6.5)
        ax.set_xlabel("questions", fontsize=7)
        body += svg(fig, "chunking-funnel")
    body += (
        "<details><summary>full funnel table</summary>"
        + html_table(["corpus", "stage", "reason", "n"], table)
        + "</details>"
    )
    return section("funnel", "Data funnel", what, body)


def section_sizes(con: duckdb.DuckDBPyConnection, corpora: list[str]) -> str:
    """Chunk sizes of the experiment's ``corpora``."""
    what = (
        "Fixed windows are size-matched to the structural chunks of the reference structure (induced when present, "
        "else gold): the table compares mean content tokens per chunkset (prefix tokens excluded), the histogram "
        "their distributions (whole-document chunks left out of the figure)."
    )
    rows = fetch_rows(
        con,
        """
        SELECT split_part(c.doc_id, '/', 1) AS corpus, c.chunkset, count(*) AS chunks,
               avg(c.content_tokens) AS mean_tokens, median(c.content_tokens) AS median_tokens
        FROM chunks c WHERE list_contains(?, split_part(c.doc_id, '/', 1)) GROUP BY ALL ORDER BY ALL""",
        [corpora],
    )
    if not rows:
        return section("sizes", "Size matching", what, not_run_note("no chunks (the chunk stage did not run)"))
    import matplotlib.pyplot as plt

    table = [
        [fmt(r["corpus"]), fmt(r["chunkset"]), fmt(r["chunks"]), fmt(r["mean_tokens"], 1), fmt(r["median_tokens"], 1)]
        for r in rows
    ]
    chunksets = sorted({r["chunkset"] for r in rows} - {"doc"})
    if not chunksets:  # document corpora (BEIR, HotpotQA): one chunk per document, nothing to match
        return section(
            "sizes",
            "Size matching",
            what,
            html_table(["corpus", "chunkset", "chunks", "mean content tokens", "median"], table),
        )
    fig, ax = plt.subplots(figsize=(PAPER_WIDTH, 2.3))
    for chunkset in chunksets:
        tokens = [
            t
            for (t,) in con.execute(
                "SELECT content_tokens FROM chunks WHERE chunkset = ? AND list_contains(?, split_part(doc_id, '/', 1))",
                [chunkset, corpora],
            ).fetchall()
        ]
        ax.hist(tokens, bins=30, histtype="step", lw=1, label=chunkset)
    ax.set_xlabel("content tokens per chunk", fontsize=7)
    ax.set_ylabel("chunks", fontsize=7)
    ax.tick_params(labelsize=6.5)
    ax.legend(fontsize=6)
    return section(
        "sizes",
        "Size matching",
        what,
        html_table(["corpus", "chunkset", "chunks", "mean content tokens", "median"], table)
        + svg(fig, "chunking-sizes"),
    )


def section_not_run(not_run: dict[str, str]) -> str:
    what = (
        "Conditions and contrasts this experiment did not produce, each with the reason (nothing is dropped silently)."
    )
    if not not_run:
        return section("notrun", "Not run", what, "<p>Everything configured ran.</p>")
    rows = [[html.escape(k), html.escape(v)] for k, v in sorted(not_run.items())]
    return section("notrun", "Not run", what, html_table(["condition / contrast", "reason"], rows))
