"""MixedLM secondary check (udfs/stats/mixed.py): per contrast of the primary cell, score ~ condition with a
random intercept per document, over the same paired queries as the bootstrap (int_contrast_deltas). The
primary cell is the one int_contrast_bootstrap marks is_primary (its rule lives there only)."""

from udfs.stats.mixed import mixedlm_table

KEY = "contrast, corpus, embedder, reranker, metric"


def model(dbt, session):
    dbt.config(materialized="table", tags=["evaluation"])
    primary = dbt.ref("int_contrast_bootstrap").filter("is_primary").project(KEY)
    deltas = dbt.ref("int_contrast_deltas").join(primary, KEY).order(f"{KEY}, cluster_id, query_id")
    return mixedlm_table(deltas.to_arrow_table())
