"""The query-rewriting study's report sections (arXiv 2609.05637), read from the rewriting marts: the solo
table, the seed-42 pre-declared ensembles and the exploratory ones against the oracle union, the budget
controls' share of the reference ensemble's gain, the router's tau curve and tau rules, the
complementarity heatmap (Jaccard@10), the cost / accuracy Pareto front, cuts by question type and answer
quality. Which strategies and seeds each cell shows is read from the warehouse (rewrite_query_metrics),
not from a config; so is the primary metric the single-metric sections show (setting rewriting_primary_metric:
``warehouse.identity.setting``, what the marts were built with).

:func:`rewriting_sections` returns nothing when the marts are absent or empty (a chunking-only
experiment shows no rewriting section); a sub-section whose mart is empty says 'not run' and why.
Texts written by the tiny packaged LLM are labelled as pipeline exercise, never as results.
"""

from __future__ import annotations

import html

import duckdb

from ingest.llm.local_models import is_tiny_model
from ragwh.experiment.report.data import fetch_rows, mart, relation_exists
from ragwh.experiment.report.markup import figure_name, fmt, fmt_p, html_table, not_run_note, png, section
from ragwh.experiment.report.slices import section_slices
from udfs.fusion.registry import fusion_rules
from udfs.metrics.registry import registered_metrics
from warehouse import identity

METRICS = registered_metrics("document")  # seeds/metric_registry.csv
RULE_NAMES = {r.rule: r.display_name for r in fusion_rules()}  # seeds/fusion_rules.csv
#: (anchor, title) of each rewriting section, in report order
NAV = (
    ("rw-tables", "rewriting: paper tables"),
    ("rw-solo", "rewriting: solo"),
    ("rw-ensembles", "ensembles"),
    ("rw-budget", "budget controls"),
    ("rw-router", "router"),
    ("rw-complementarity", "complementarity"),
    ("rw-pareto", "cost / accuracy"),
    ("rw-types", "question types"),
    ("rw-slices", "slices"),
    ("rw-answers", "answer quality"),
)
SCOPES = {"seed": "seed {seed} (the paper's post-hoc scope)", "pooled": "pooled over seeds"}


def has_rewriting(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the rewriting marts were built and hold rows (the solo table is their root)."""
    return relation_exists(con, "rewrite_solo") and con.execute("SELECT count(*) FROM rewrite_solo").fetchone()[0] > 0


def rewriting_sections(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every rewriting section as HTML, or [] when the rewriting marts are empty or absent."""
    if not has_rewriting(con):
        return []
    import matplotlib

    matplotlib.use("Agg")
    label = _tiny_model_label(con)
    primary = identity.setting(con, "rewriting_primary_metric")
    return [
        section_paper_tables(con, primary),
        section_solo(con, label, primary),
        section_ensembles(con, primary),
        section_budget(con, primary),
        section_router(con, primary),
        section_complementarity(con),
        section_pareto(con, primary),
        section_types(con, primary),
        section_slices(con, "rewriting"),
        section_answers(con),
    ]


def section_paper_tables(con: duckdb.DuckDBPyConnection, primary: str) -> str:
    """The paper's rewriting tables in its numbering and layout (Tables 3, 4, 5, 6, 11, 12, 13, 14), from the
    definitions `ragwh export tables` writes them with: the report and the LaTeX show the same numbers."""
    from ragwh.experiment.tables import rewriting_label
    from ragwh.experiment.tables.build import Context, build, skipped_reason
    from ragwh.experiment.tables.render import to_html
    from ragwh.experiment.tables.rewriting import definitions

    ctx = Context(primary_metric=primary, label=rewriting_label(con))
    parts = []
    for definition in definitions(primary):
        tables = build(con, definition, ctx)
        if not tables:
            reason = skipped_reason(con, definition) or "no rows for this warehouse's cells"
            parts.append(f"<h3>{html.escape(definition.title)}</h3>" + not_run_note(reason))
            continue
        parts.append(f'<h3>{html.escape(definition.title)}</h3><p class="what">{html.escape(definition.caption)}</p>')
        for table in tables:
            group = " · ".join(str(v) for v in table.group.values())
            parts.append(f"<h4>{html.escape(group)}</h4>" + to_html(table, "paper"))
    what = (
        "The query-rewriting paper's tables (arXiv 2609.05637) as `ragwh export tables` writes them (LaTeX, CSV, "
        "Markdown), one sub-table per corpus x embedder x reranker (and seed scope where the paper has one). "
        + (ctx.label or "")
    )
    return section("rw-tables", "Rewriting: the paper's tables", what.strip(), "".join(parts))


def _cells(rows: list[dict]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        out.setdefault((r["corpus"], r["embedder"], r["reranker"]), []).append(r)
    return out


def _cell_title(cell: tuple) -> str:
    return f"<h3>{html.escape(' · '.join(cell[:2]) + ' · reranker ' + cell[2])}</h3>"


def _ci(r: dict, lo: str = "ci_low", hi: str = "ci_high") -> str:
    return f"[{fmt(r.get(lo), 3)}, {fmt(r.get(hi), 3)}]"


def _shown(con: duckdb.DuckDBPyConnection) -> dict[tuple, str]:
    """Per cell, which strategies and seeds the marts hold (from rewrite_query_metrics: the warehouse's
    scored rankings, whatever a config asked for)."""
    out = {}
    for c, e, r, solo, controls, seeds in con.execute("""
            SELECT corpus, embedder, reranker,
                list(DISTINCT strategy ORDER BY strategy) FILTER (WHERE kind = 'solo'),
                list(DISTINCT strategy ORDER BY strategy) FILTER (WHERE kind = 'control'), list(DISTINCT seed ORDER BY seed)
            FROM rewrite_query_metrics GROUP BY ALL ORDER BY ALL""").fetchall():
        solo = sorted(solo or [], key=lambda s: (s != "S1", s))
        out[(c, e, r)] = (
            f"<p class='meta'>shown: solo strategies {html.escape(', '.join(solo) or 'none')}; controls "
            f"{html.escape(', '.join(controls or []) or 'none')}; seeds {', '.join(map(str, seeds))}</p>"
        )
    return out


def _tiny_model_label(con: duckdb.DuckDBPyConnection) -> str:
    """A banner when the strategies' texts came from the tiny packaged model (SmolLM2-135M)."""
    if not (relation_exists(con, "rewrites") and relation_exists(con, "llm_calls")):
        return ""
    models = [
        m
        for (m,) in con.execute("""SELECT DISTINCT l.model FROM llm_calls l
        WHERE l.cache_key IN (SELECT llm_call_key FROM rewrites WHERE llm_call_key IS NOT NULL) ORDER BY 1""").fetchall()
    ]
    tiny = [m for m in models if is_tiny_model(m)]
    if not tiny:
        return ""
    return (
        '<div class="banner">TINY-MODEL OUTPUT, NOT RESULTS. The rewriting strategies\' texts were written by '
        f"{html.escape(', '.join(tiny))}, the small model packaged to exercise the pipeline offline; these "
        "numbers show that the study runs end to end and support no claim about query rewriting.</div>"
    )


def section_solo(con: duckdb.DuckDBPyConnection, label: str, primary: str) -> str:
    what = (
        "Each solo strategy's 3-seed mean ± sd (over seeds) of the document metrics, and its paired difference in "
        f"{primary} against S1: mean over queries of the per-query difference (averaged over the seeds both have), "
        "with the paired bootstrap over queries (95% CI, two-sided p, uncorrected as the paper marks it) and, added, "
        "Holm's p across the strategies of the cell. "
        "Miss rate: share of queries with HIT@10 = 0; rescue: share of S1's misses at seed 42 the strategy hits. "
        "Short lists: the (query, seed) rankings holding fewer than 10 / 20 documents (under the paper's fixed "
        "20-chunk pool, rewriting.pool_fill: fixed, long documents filling several pooled chunks leave a list short)."
    )
    rows = mart(con, "rewrite_solo", "ORDER BY corpus, embedder, reranker, strategy")
    fails = {(r["corpus"], r["embedder"], r["reranker"], r["strategy"]): r for r in mart(con, "rewrite_failure_modes")}
    body = label
    shown = _shown(con) if relation_exists(con, "rewrite_query_metrics") else {}
    for cell, rs in _cells(rows).items():
        by = {(r["strategy"], r["metric"]): r for r in rs}
        table = []
        for s in sorted({r["strategy"] for r in rs}, key=lambda s: (s != "S1", s)):
            p = by.get((s, primary), {})
            f = fails.get((*cell, s), {})
            means = [
                f"{fmt(r['mean_value'])} ± {fmt(r['sd_seeds'])}" if (r := by.get((s, m))) else "–" for m in METRICS
            ]
            table.append(
                [html.escape(s), *means]
                + [
                    fmt(p.get("delta"), 3),
                    _ci(p),
                    fmt_p(p.get("p_value")),
                    fmt_p(p.get("p_holm")),
                    fmt(f.get("miss_rate")),
                    fmt(f.get("rescue_rate")),
                    _short(f),
                ]
            )
        base = fails.get((*cell, "S1"), {})
        line = (
            f"<p class='meta'>S1: {_short(base)} rankings hold fewer than 10 / 20 documents</p>"
            if base.get("n_rankings") is not None
            else ""
        )
        body += (
            _cell_title(cell)
            + shown.get(cell, "")
            + line
            + html_table(
                [
                    "strategy",
                    *METRICS,
                    f"Δ {primary} vs S1",
                    "95% CI",
                    "p",
                    "Holm p",
                    "miss rate",
                    "rescue",
                    "short lists (< 10 / < 20)",
                ],
                table,
            )
        )
    return section("rw-solo", "Query rewriting: solo strategies against S1", what, body)


def _short(f: dict) -> str:
    """'a / b of n': rankings shorter than 10 / 20 documents (rewrite_failure_modes), '–' when not counted."""
    if f.get("n_rankings") is None:
        return "–"
    return f"{f['n_short_10']} / {f['n_short_20']} of {f['n_rankings']}"


def section_ensembles(con: duckdb.DuckDBPyConnection, primary: str) -> str:
    what = (
        "The paper's pre-declared ensembles on its post-hoc seed: each member's top-20 list, the union merged by max "
        f"score and cut at 10, against the best single method on that seed ({primary}; paired bootstrap over queries, "
        "uncorrected p as the paper reports it, and Holm within the pre-declared family added), with the oracle union "
        "of the same members as the ceiling. Below, exploratory: every subset of two or more strategies fused four "
        "ways (max-score union, RRF, CombSUM, CombMNZ), pooled over seeds, the five best per rule, Holm over every "
        "exploratory subset x rule (one-member subsets are no ensembles and enter no family). ★ marks the scope's "
        "best ensemble (chosen with hindsight)."
    )
    rows = [
        r
        for r in mart(
            con,
            "rewrite_ensembles",
            "ORDER BY corpus, embedder, reranker, rule, mean_value DESC, n_members, subset_mask",
        )
        if r["metric"] == primary and r["n_members"] >= 2
    ]
    if not rows:
        return section(
            "rw-ensembles",
            "Ensembles and the oracle union",
            what,
            not_run_note("no complete group of the solo strategies (rewrite_ensembles is empty)"),
        )
    oracle = {
        (r["corpus"], r["embedder"], r["reranker"], r["scope"], r["subset_mask"]): r["oracle_hit"]
        for r in mart(con, "rewrite_oracle")
    }
    body = ""
    for cell, rs in _cells(rows).items():
        body += _cell_title(cell)
        for scope in ("seed", "pooled"):
            scoped = [r for r in rs if r["scope"] == scope]
            if not scoped:
                continue
            chosen = (
                [r for r in scoped if r["family"] == "predeclared"]
                if scope == "seed"
                else [r for rule in RULE_NAMES for r in [x for x in scoped if x["rule"] == rule][:5]]
            )
            title = SCOPES[scope].format(seed=scoped[0]["seed"])
            body += (
                f"<p class='meta'>{html.escape(title)}: {'pre-declared' if scope == 'seed' else 'exploratory'}; "
                f"best solo strategy {html.escape(scoped[0]['best_solo'])} ({fmt(scoped[0]['best_solo_value'])})</p>"
            )
            table = [
                [
                    ("★ " if r["is_best"] else "") + html.escape(RULE_NAMES[r["rule"]]),
                    html.escape(r["subset"]),
                    fmt(r["mean_value"]),
                    fmt(r["delta"], 3),
                    _ci(r),
                    fmt_p(r["p_value"]),
                    fmt_p(r["p_holm"]),
                    fmt(oracle.get((*cell, scope, r["subset_mask"]))),
                ]
                for r in chosen
            ]
            body += html_table(
                ["rule", "members", primary, "Δ vs best solo", "95% CI", "p", "Holm p", "oracle union"], table
            )
    return section("rw-ensembles", "Ensembles and the oracle union", what, body)


def section_budget(con: duckdb.DuckDBPyConnection, primary: str) -> str:
    what = (
        f"Budget-matched controls on {primary}: S1 with a 5x rerank pool and S1 over four HNSW graphs. Share of "
        "gain: the paper's share = (the 3-seed control gain) / (the seed-42 reference ensemble - the 3-seed S1), the "
        "paper's formula (its 40% = 5.08 / 12.48; the reference is the paper's S1+S3+S4+HyDE); added, the "
        "scope-consistent share = the control's gain over S1 / the reference ensemble's gain over S1, both on the same "
        "queries and seeds; no share where the reference does not beat S1."
    )
    rows = [
        r
        for r in mart(con, "rewrite_budget_baselines", "ORDER BY corpus, embedder, reranker, scope DESC, control")
        if r["metric"] == primary
    ]
    if not rows:
        return section("rw-budget", "Budget-matched controls", what, not_run_note("rewrite_budget_baselines is empty"))
    table = [
        [
            html.escape(f"{r['corpus']} · {r['embedder']}"),
            html.escape(SCOPES[r["scope"]].format(seed=r["seed"])),
            html.escape(r["control"]),
            html.escape(r["status"]),
            fmt(r["baseline_value"]),
            fmt(r["control_value"]),
            html.escape(r["reference_subset"] or "–"),
            fmt(r["reference_value"]),
            fmt(r["gain_control"], 3),
            _ci(r),
            fmt(r["gain_reference"], 3),
            fmt(r.get("share_paper")),
            fmt(r["share_captured"]),
            html.escape(r["reason"] or ""),
        ]
        for r in rows
    ]
    return section(
        "rw-budget",
        "Budget-matched controls",
        what,
        html_table(
            [
                "cell",
                "scope",
                "control",
                "status",
                "S1",
                "control",
                "reference",
                "reference value",
                "control gain",
                "95% CI",
                "reference gain",
                "paper's share",
                "share captured (addition)",
                "reason",
            ],
            table,
        ),
    )


def section_router(con: duckdb.DuckDBPyConnection, primary: str) -> str:
    what = (
        f"The confidence-gated router: a query is expanded with the helper (merged with S1 by max score) when S1's "
        f"top-1 score is below tau. The curve plots {primary} against the share of queries expanded over the tau "
        "grid, one line per helper; the table gives the paper's tau (fixed at 0.65 for every dataset) and, as the "
        "project's additions, the midpoint of the hit / miss top-1 means fitted on the same dataset (in-sample), "
        "transferred from another, and cross-fitted on held-out folds, each with its gap to the best grid tau."
    )
    sweep = [
        r
        for r in mart(con, "rewrite_router_sweep", "ORDER BY corpus, embedder, reranker, helper, tau")
        if r["metric"] == primary
    ]
    if not sweep:
        return section(
            "rw-router",
            "The router: tau curve and tau rules",
            what,
            not_run_note("no complete group with a helper (rewrite_router_sweep is empty)"),
        )
    import matplotlib.pyplot as plt

    from ragwh.experiment.tables.rewriting import TAU_RULES

    body = ""
    for cell, rs in _cells(sweep).items():
        fig, ax = plt.subplots(figsize=(6.5, 4))
        for helper in sorted({r["helper"] for r in rs}):
            pts = [r for r in rs if r["helper"] == helper]
            ax.plot([100 * r["pct_expanded"] for r in pts], [r["router_value"] for r in pts], marker="o", label=helper)
        ax.axhline(rs[0]["baseline_value"], ls="--", color="grey", lw=1, label="always S1")
        ax.set_xlabel("% of queries expanded")
        ax.set_ylabel(primary)
        ax.set_title(" · ".join(cell), fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        body += _cell_title(cell) + png(fig, figure_name(f"rewriting-router-{'-'.join(cell)}"))
    rules = [
        r
        for r in mart(con, "rewrite_router_tau", "ORDER BY corpus, embedder, reranker, helper, rule, source")
        if r["metric"] == primary
    ]
    table = [
        [
            html.escape(f"{r['corpus']} · {r['helper']}"),
            html.escape(TAU_RULES.get(r["rule"], r["rule"])),
            html.escape(r["source"]),
            fmt(r["tau"]),
            fmt(100 * r["pct_expanded"], 1),
            fmt(r["router_value"]),
            fmt(r["delta_vs_baseline"], 3),
            fmt(r["delta_vs_merge"], 3),
            fmt(r["best_grid_tau"], 2),
            fmt(r["gap"], 3),
        ]
        for r in rules
    ]
    body += html_table(
        [
            "cell · helper",
            "tau rule",
            "fitted on",
            "tau",
            "% expanded",
            primary,
            "Δ vs S1",
            "Δ vs always-merge",
            "best grid tau",
            "gap",
        ],
        table,
    )
    return section("rw-router", "The router: tau curve and tau rules", what, body)


def section_complementarity(con: duckdb.DuckDBPyConnection) -> str:
    what = (
        "Pairwise Jaccard@10 of the solo strategies' top-10 document sets (mean over queries and seeds): low values "
        "mean the strategies retrieve different documents, which is what ensembles and routers can exploit."
    )
    rows = mart(con, "rewrite_jaccard", "ORDER BY corpus, embedder, reranker, strategy_a, strategy_b")
    if not rows:
        return section("rw-complementarity", "Complementarity", what, not_run_note("rewrite_jaccard is empty"))
    import matplotlib.pyplot as plt

    body = ""
    for cell, rs in _cells(rows).items():
        names = sorted({r["strategy_a"] for r in rs}, key=lambda s: (s != "S1", s))
        value = {(r["strategy_a"], r["strategy_b"]): r["jaccard"] for r in rs}
        grid = [[1.0 if a == b else value.get((a, b), float("nan")) for b in names] for a in names]
        fig, ax = plt.subplots(figsize=(4.8, 4))
        im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis")
        ax.set_xticks(range(len(names)), names, fontsize=8, rotation=45)
        ax.set_yticks(range(len(names)), names, fontsize=8)
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v < 0.6 else "black")
        fig.colorbar(im, ax=ax, label="Jaccard@10")
        ax.set_title(" · ".join(cell), fontsize=9)
        body += _cell_title(cell) + png(fig, figure_name(f"rewriting-jaccard-{'-'.join(cell)}"))
    return section("rw-complementarity", "Complementarity: Jaccard@10 of top-10 sets", what, body)


def section_pareto(con: duckdb.DuckDBPyConnection, primary: str) -> str:
    what = (
        f"Cost against {primary}: S1 alone (free), each helper alone, always-merge, and the router at every tau; "
        "cost is LLM tokens per query (calls when some backend reported no tokens). The line joins the "
        "Pareto-optimal points (nothing cheaper scores as well)."
    )
    rows = mart(con, "rewrite_router_pareto", "ORDER BY corpus, embedder, reranker, cost, value DESC")
    if not rows:
        return section(
            "rw-pareto", "Cost / accuracy Pareto front", what, not_run_note("rewrite_router_pareto is empty")
        )
    import matplotlib.pyplot as plt

    marks = {
        "always-baseline": ("s", "#000000"),
        "helper-alone": ("x", "#7f8c8d"),
        "always-merge": ("D", "#c0392b"),
        "router": ("o", "#2874a6"),
    }
    body = ""
    for cell, rs in _cells(rows).items():
        fig, ax = plt.subplots(figsize=(6.5, 4))
        for setting, (marker, color) in marks.items():
            pts = [r for r in rs if r["setting"] == setting]
            ax.scatter(
                [r["cost"] for r in pts], [r["value"] for r in pts], marker=marker, color=color, s=22, label=setting
            )
        front = [r for r in rs if r["on_front"]]
        ax.plot([r["cost"] for r in front], [r["value"] for r in front], color="#e67e22", lw=1.5, label="Pareto front")
        ax.set_xlabel(f"LLM {rs[0]['cost_axis']} per query")
        ax.set_ylabel(primary)
        ax.set_title(" · ".join(cell), fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
        table = [
            [
                html.escape(r["setting"]),
                html.escape(r["helper"] or "–"),
                fmt(r["tau"], 2),
                fmt(r["value"]),
                fmt(r["cost"], 1),
            ]
            for r in front
        ]
        body += (
            _cell_title(cell)
            + png(fig, figure_name(f"rewriting-pareto-{'-'.join(cell)}"))
            + html_table(["on the front", "helper", "tau", primary, "cost"], table)
        )
    return section("rw-pareto", "Cost / accuracy Pareto front", what, body)


def section_types(con: duckdb.DuckDBPyConnection, primary: str) -> str:
    what = (
        f"Exploratory, no multiplicity correction: per question type (HotpotQA bridge / comparison, EnterpriseRAG-Bench "
        f"question_type, AmbigNQ ambiguous / single) each strategy's {primary} and its paired difference from S1 "
        "(bootstrap over the type's queries), the rescue rate of the type's S1 misses at seed 42, and the router's "
        "gain over S1 with that helper at the paper's fixed tau (0.65)."
    )
    rows = (
        [
            r
            for r in mart(con, "rewrite_query_type_cuts", "ORDER BY corpus, embedder, reranker, query_type, strategy")
            if r["metric"] == primary
        ]
        if relation_exists(con, "rewrite_query_type_cuts")
        else []
    )
    if not rows:
        return section("rw-types", "By question type", what, not_run_note("rewrite_query_type_cuts is empty"))
    body = ""
    for cell, rs in _cells(rows).items():
        table = [
            [
                html.escape(r["query_type"]),
                html.escape(r["strategy"]),
                fmt(r["n_queries_per_seed"]),
                fmt(r["mean_value"]),
                fmt(r["delta"], 3),
                _ci(r),
                fmt_p(r["p_value"]),
                fmt(r["rescue_rate"]),
                fmt(r["router_gain"], 3),
            ]
            for r in sorted(rs, key=lambda r: (r["query_type"], r["strategy"] != "S1", r["strategy"]))
        ]
        body += _cell_title(cell) + html_table(
            ["type", "strategy", "queries", primary, "Δ vs S1", "95% CI", "p", "rescue", "router gain"], table
        )
    return section("rw-types", "By question type (exploratory)", what, body)


def section_answers(con: duckdb.DuckDBPyConnection) -> str:
    what = (
        "The reader's answers from the top-k passages of S1, always-merge and the router, scored against the gold "
        "answers with SQuAD v1.1 normalization (exact match and token F1, the best over aliases; F1 is the measure "
        "for sentence-long gold answers); paired differences with the bootstrap over queries, overall and split by "
        "whether the router expanded the query (triggered / untriggered, the paper's Table 14 split), at every grid "
        "tau, at the paper's fixed tau (0.65) and at the per-dataset in-sample midpoint (an addition)."
    )
    rows = (
        fetch_rows(
            con,
            "SELECT * FROM rewrite_answer_quality WHERE split = 'all' OR tau IS NOT NULL "
            "ORDER BY corpus, embedder, reranker, helper, tau NULLS FIRST, metric, contrast, split",
        )
        if relation_exists(con, "rewrite_answer_quality")
        else []
    )
    if not rows:
        return section(
            "rw-answers",
            "Answer quality",
            what,
            not_run_note("no reader answers (reader_answers is empty: the reader stage has not run)"),
        )
    table = [
        [
            html.escape(
                f"{r['corpus']} · {r['helper']}"
                + ("" if r["tau"] is None else f" · tau {r['tau']:.2f}")
                + (" (the paper's tau)" if r.get("paper_tau") else "")
                + (" (addition: in-sample midpoint)" if r.get("midpoint_tau") else "")
            ),
            html.escape(r["metric"]),
            html.escape(r["contrast"]),
            html.escape(r["split"]),
            fmt(r["n_queries"]),
            fmt(r["mean_treatment"]),
            fmt(r["mean_control"]),
            fmt(r["delta"], 3),
            _ci(r),
            fmt_p(r["p_value"]),
        ]
        for r in rows
    ]
    return section(
        "rw-answers",
        "Answer quality",
        what,
        _reader_calls(con)
        + html_table(
            ["cell", "metric", "contrast", "split", "queries", "treatment", "control", "Δ", "95% CI", "p"], table
        ),
    )


#: corpus_meta reader_calls -> what the reader's calls were (ingest/rewriting/reader.py)
READER_CALLS = {
    "shared": "one cached temperature-0 reader call per distinct prompt (reader.calls: shared): an "
    "untriggered query reads S1's passages in both arms, so its router - S1 difference is 0 by "
    "construction",
    "per_arm": "separate seeded reader calls per arm at the study's sampling temperature (reader.calls: "
    "per_arm, the paper's reading): untriggered differences are reader noise",
}


def _reader_calls(con: duckdb.DuckDBPyConnection) -> str:
    """Which reader calls each corpus's answers came from (corpus_meta reader_calls), one line."""
    if not relation_exists(con, "corpus_meta"):
        return ""
    rows = con.execute("SELECT corpus, value FROM corpus_meta WHERE key = 'reader_calls' ORDER BY 1").fetchall()
    return "".join(f"<p class='meta'>{html.escape(c)}: {html.escape(READER_CALLS.get(v, v))}</p>" for c, v in rows)
