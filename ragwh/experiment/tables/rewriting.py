"""The query-rewriting study's paper tables (arXiv 2609.05637), one definition per table, read from the
rewriting marts (``docs/rewriting_marts.md``), numbered as the paper numbers them: solo strategies (Table 3),
oracle union (4), ensembles (5: the seed-42 post-hoc scope, pooled rows labelled), router (6), budget-matched
controls (11), the router's tau sweep (12), the router's helpers swapped (13), answer quality (14). Each definition
is a query and a column list: when a mart gains a column (a seed scope, a family), adapt the query's WHERE / SELECT
and the columns here. The tables that show one metric show the study's primary metric (setting
rewriting_primary_metric, ``warehouse.identity.setting``): :func:`definitions` takes it; the oracle union (Table 4)
is HIT@10 whatever the setting (rewrite_oracle: 'some member hits')."""

from __future__ import annotations

from ragwh.experiment.tables.build import column
from ragwh.experiment.tables.spec import Pivot, TableDef
from udfs.metrics.registry import registered_metrics

METRICS = registered_metrics("document")  # seeds/metric_registry.csv
#: the router's tau rules (rewrite_router_tau.rule): the paper's fixed tau, then the project's additions
TAU_RULES = {
    "paper": "the paper's fixed tau",
    "same_dataset": "addition: in-sample midpoint",
    "transfer": "addition: transferred midpoint",
    "cross_fit": "addition: cross-fitted midpoint",
}
_RULE_LABEL = (
    "CASE rule "
    + " ".join("WHEN '{}' THEN '{}'".format(k, v.replace("'", "''")) for k, v in TAU_RULES.items())
    + " END"
)
_RULE_ORDER = "CASE rule " + " ".join(f"WHEN '{k}' THEN {i}" for i, k in enumerate(TAU_RULES)) + " END"


def _metrics(rows: list[dict]) -> list[str]:
    present = {r["metric"] for r in rows}
    return [m for m in METRICS if m in present] + sorted(present - set(METRICS))


def _primary(primary: str):
    """The SQL parameters of a table that shows the primary metric (``$primary`` in its query)."""
    return lambda ctx: {"primary": primary}


def solo(primary: str) -> TableDef:
    return TableDef(
        name="rewriting-solo",
        title="Table 3: solo strategies",
        caption="Each strategy's mean ± sd over the LLM seeds of the document metrics.",
        legend=(
            "Marks, as the paper marks them: uncorrected paired-bootstrap p over queries against S1: "
            "* p < 0.05, ** p < 0.01, *** p < 0.001; the Holm-adjusted p across the strategies of the cell "
            f"({primary}) is an added column; bold: the best strategy per column."
        ),
        requires="rewrite_solo",
        sql="""SELECT corpus, embedder, reranker, strategy, metric, n_seeds, n_queries_per_seed, mean_value, sd_seeds,
                       n_paired, delta, ci_low, ci_high, p_value, p_holm, family_size,
                       max(p_holm) FILTER (WHERE metric = $primary)
                           OVER (PARTITION BY corpus, embedder, reranker, strategy) AS p_holm_primary
                FROM rewrite_solo ORDER BY corpus, embedder, reranker, strategy <> 'S1', strategy, metric""",
        columns=(
            column("strategy", "strategy", "text"),
            column("seeds", "n_seeds", "int"),
            column("queries", "n_queries_per_seed", "int"),
            column(f"Holm p ({primary})", "p_holm_primary", "p"),
        ),
        pivot=Pivot(
            "metric",
            ("strategy",),
            column("", kind="mean_sd", fields=("mean_value", "sd_seeds"), best="max", marks="p_value"),
            _metrics,
        ),
        params=_primary(primary),
    )


ORACLE = TableDef(
    name="rewriting-oracle",
    title="Table 4: oracle union",
    caption=(
        "HIT@10 of 'some member hits' over the complete groups for the ten best subsets of two or more "
        "strategies, against the subset's best member (paired bootstrap over queries)."
    ),
    requires="rewrite_oracle",
    sql="""SELECT corpus, embedder, reranker, coalesce(seed::varchar, 'pooled') AS seed, subset, n_members, n_seeds,
                  n_queries, oracle_hit, best_member, best_member_hit, delta, ci_low, ci_high, p_value
           FROM rewrite_oracle WHERE n_members >= 2
           QUALIFY row_number() OVER (PARTITION BY corpus, embedder, reranker, seed
                                      ORDER BY oracle_hit DESC, n_members, subset_mask) <= 10
           ORDER BY corpus, embedder, reranker, seed NULLS LAST, oracle_hit DESC, n_members, subset_mask""",
    group_by=("corpus", "embedder", "reranker", "seed"),
    columns=(
        column("members", "subset", "text"),
        column("oracle HIT@10", "oracle_hit"),
        column("best member", "best_member", "text"),
        column("HIT@10", "best_member_hit"),
        column("Δ", "delta", "delta"),
        column("95% CI", kind="ci", digits=-3, fields=("ci_low", "ci_high")),
        column("p", "p_value", "p"),
    ),
)


def ensembles(primary: str) -> TableDef:
    return TableDef(
        name="rewriting-ensembles",
        title="Table 5: pre-declared ensembles",
        caption=(
            f"The pre-declared subsets per fusion rule: {primary} (mean ± sd over seeds; one seed in the "
            "paper's seed-42 scope) and the difference from the best solo strategy (paired bootstrap over "
            "queries; Holm across the pre-declared family as an added column). The exploratory subsets are in "
            "the rewrite_ensembles mart."
        ),
        legend="Marks on Δ, as the paper marks them: uncorrected p < 0.05 *, < 0.01 **, < 0.001 ***.",
        requires="rewrite_ensembles",
        sql="""SELECT corpus, embedder, reranker, coalesce(seed::varchar, 'pooled') AS seed, family, rule, subset, n_members,
                       metric, n_seeds, n_queries, mean_value, sd_seeds, best_solo, best_solo_value, delta, ci_low, ci_high,
                       p_value, p_holm, family_size, is_best
                FROM rewrite_ensembles WHERE metric = $primary AND n_members >= 2 AND family = 'predeclared'
                ORDER BY corpus, embedder, reranker, seed NULLS LAST, rule, mean_value DESC, n_members, subset_mask""",
        group_by=("corpus", "embedder", "reranker", "seed"),
        columns=(
            column("rule", "rule", "text"),
            column("members", "subset", "text"),
            column(primary, kind="mean_sd", fields=("mean_value", "sd_seeds")),
            column("best solo", "best_solo", "text"),
            column("Δ", "delta", "delta", marks="p_value"),
            column("95% CI", kind="ci", digits=-3, fields=("ci_low", "ci_high")),
            column("p", "p_value", "p"),
            column("Holm p", "p_holm", "p"),
        ),
        params=_primary(primary),
    )


def router(primary: str) -> TableDef:
    return TableDef(
        name="rewriting-router",
        title="Table 6: confidence-gated router",
        caption=(
            "The paper's row: tau fixed at 0.65 (the paper's EnterpriseRAG-Bench hit / miss midpoint, 0.66, "
            "rounded down) for every dataset, no tuning. The project's additions, labelled so: the midpoint of "
            "the hit / miss top-1 means fitted on the same dataset (in-sample), transferred from another "
            f"corpus, and cross-fitted on held-out folds. {primary} and its differences from always-S1 and "
            "always-merge, the LLM calls per query, and the gap to the best grid tau."
        ),
        requires="rewrite_router_tau",
        sql=f"""SELECT corpus, embedder, reranker, helper, {_RULE_LABEL} AS rule_label, source, metric, tau, pct_expanded,
                       router_value, baseline_value, merge_value, delta_vs_baseline, delta_vs_merge, calls_per_query,
                       best_grid_tau, gap
                FROM rewrite_router_tau WHERE metric = $primary
                ORDER BY corpus, embedder, reranker, helper, {_RULE_ORDER}, source""",
        columns=(
            column("helper", "helper", "text"),
            column("tau rule", "rule_label", "text"),
            column("fitted on", "source", "text"),
            column("tau", "tau"),
            column("expanded", "pct_expanded", "pct"),
            column(primary, "router_value"),
            column("Δ vs S1", "delta_vs_baseline", "delta"),
            column("Δ vs merge", "delta_vs_merge", "delta"),
            column("calls / query", "calls_per_query", digits=2),
            column("gap", "gap", "delta"),
        ),
        params=_primary(primary),
    )


def budget(primary: str) -> TableDef:
    return TableDef(
        name="rewriting-budget",
        title="Table 11: budget-matched controls",
        caption=(
            f"{primary} of S1 with a larger rerank pool and over four seeded ANN indexes, against S1 and the "
            "reference ensemble: each control's gain over S1 (95% CI) and the share of the reference "
            "ensemble's gain it captures. Paper's share: the paper's formula, (3-seed control gain) / (seed-42 "
            "reference ensemble - 3-seed S1), its 40% = 5.08 / 12.48. Share captured: the project's "
            "scope-consistent share, both gains on the same queries and seeds."
        ),
        requires="rewrite_budget_baselines",
        sql="""SELECT corpus, embedder, reranker, scope, coalesce(seed::varchar, 'pooled') AS seed, control, metric, status,
                       reason, n_seeds, n_queries, baseline_value, control_value, reference_subset, reference_value,
                       gain_control, ci_low, ci_high, p_value, gain_reference, share_captured, share_paper
                FROM rewrite_budget_baselines WHERE metric = $primary
                ORDER BY corpus, embedder, reranker, scope, seed NULLS LAST, control""",
        group_by=("corpus", "embedder", "reranker", "scope", "seed"),
        columns=(
            column("control", "control", "text"),
            column("S1", "baseline_value"),
            column("control", "control_value"),
            column("reference ensemble", "reference_value"),
            column("control gain", "gain_control", "delta"),
            column("95% CI", kind="ci", digits=-3, fields=("ci_low", "ci_high")),
            column("reference gain", "gain_reference", "delta"),
            column("paper's share", "share_paper", "pct"),
            column("share captured (addition)", "share_captured", "pct"),
        ),
        params=_primary(primary),
    )


ANSWERS = TableDef(
    name="rewriting-answers",
    title="Table 14: answer quality",
    caption=(
        "The reader's exact match and token F1 (SQuAD normalization, best over aliases) between the reader's "
        "settings, paired over queries with the bootstrap: always-merge against S1, and the router at the "
        "paper's fixed tau (0.65) against S1 and always-merge, over all queries and split, as the paper splits "
        "it, into the queries the router expanded (triggered) and the rest (untriggered). With one cached "
        "reader call per distinct prompt (reader.calls: shared) an untriggered query reads S1's passages in "
        "both arms, so its difference is 0 by construction; reader.calls: per_arm asks the reader separately "
        "per arm (the paper's reading: separate reader calls), which the caption's label names."
    ),
    requires="rewrite_answer_quality",
    sql="""SELECT corpus, embedder, reranker, helper, tau, metric, split, contrast, treatment, control, n_seeds, n_queries,
                  mean_treatment, mean_control, delta, ci_low, ci_high, p_value
           FROM rewrite_answer_quality WHERE (tau IS NULL AND split = 'all') OR paper_tau
           ORDER BY corpus, embedder, reranker, helper, tau NULLS FIRST, metric, contrast,
                    CASE split WHEN 'all' THEN 0 WHEN 'triggered' THEN 1 ELSE 2 END""",
    columns=(
        column("helper", "helper", "text"),
        column("tau", "tau", digits=2),
        column("metric", "metric", "text"),
        column("contrast", "contrast", "text"),
        column("queries", "split", "text"),
        column("n", "n_queries", "int"),
        column("treatment", "mean_treatment"),
        column("control", "mean_control"),
        column("Δ", "delta", "delta"),
        column("95% CI", kind="ci", digits=-3, fields=("ci_low", "ci_high")),
        column("p", "p_value", "p"),
    ),
)


def tau_sweep(primary: str) -> TableDef:
    return TableDef(
        name="rewriting-tau-sweep",
        title="Table 12: the router's tau sweep",
        caption=(
            "Per helper and tau of the grid: the share of queries expanded (S1's top-1 score < tau), the "
            f"router's {primary} and its difference from always-S1 and from always-merge (paired bootstrap over "
            "queries), and the LLM calls per query."
        ),
        requires="rewrite_router_sweep",
        sql="""SELECT corpus, embedder, reranker, helper, tau, metric, pct_expanded, router_value, delta_vs_baseline,
                       delta_vs_baseline_ci_low, delta_vs_baseline_ci_high, delta_vs_merge, calls_per_query
                FROM rewrite_router_sweep WHERE metric = $primary
                ORDER BY corpus, embedder, reranker, helper, tau""",
        columns=(
            column("helper", "helper", "text"),
            column("tau", "tau"),
            column("expanded", "pct_expanded", "pct"),
            column(primary, "router_value"),
            column("Δ vs S1", "delta_vs_baseline", "delta"),
            column("95% CI", kind="ci", digits=-3, fields=("delta_vs_baseline_ci_low", "delta_vs_baseline_ci_high")),
            column("Δ vs merge", "delta_vs_merge", "delta"),
            column("calls / query", "calls_per_query", digits=2),
        ),
        params=_primary(primary),
    )


def helpers(primary: str) -> TableDef:
    return TableDef(
        name="rewriting-helpers",
        title="Table 13: the router's helper swapped",
        caption=(
            "The router with each strategy as its helper at the paper's fixed tau (0.65, every dataset): "
            f"{primary}, its difference from always-S1 and from always-merge with that helper, the share "
            "expanded and the LLM calls per query."
        ),
        requires="rewrite_router_tau",
        sql="""SELECT corpus, embedder, reranker, helper, tau, pct_expanded, router_value, merge_value, delta_vs_baseline,
                       delta_vs_merge, calls_per_query
                FROM rewrite_router_tau WHERE metric = $primary AND rule = 'paper'
                ORDER BY corpus, embedder, reranker, router_value DESC, helper""",
        columns=(
            column("helper", "helper", "text"),
            column("tau", "tau"),
            column("expanded", "pct_expanded", "pct"),
            column(primary, "router_value", best="max"),
            column("always-merge", "merge_value"),
            column("Δ vs S1", "delta_vs_baseline", "delta"),
            column("Δ vs merge", "delta_vs_merge", "delta"),
            column("calls / query", "calls_per_query", digits=2),
        ),
        params=_primary(primary),
    )


def definitions(primary: str) -> list[TableDef]:
    """The eight tables in the paper's order (Tables 3, 4, 5, 6, 11, 12, 13, 14), the single-metric ones on
    ``primary`` (the setting rewriting_primary_metric the marts were built with)."""
    return [
        solo(primary),
        ORACLE,
        ensembles(primary),
        router(primary),
        budget(primary),
        tau_sweep(primary),
        helpers(primary),
        ANSWERS,
    ]
