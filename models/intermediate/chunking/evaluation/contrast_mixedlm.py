"""MixedLM secondary check (udfs/mixed.py): per contrast of the primary cell, score ~ condition with a
random intercept per document, over the same paired queries as the bootstrap (contrast_deltas)."""
from udfs.mixed import mixedlm_table


def model(dbt, session):
    dbt.config(materialized="table", tags=["evaluation"])
    metric = dbt.config.get("primary_metric")
    embedder = dbt.config.get("primary_embedder")
    reranker = dbt.config.get("primary_reranker")
    deltas = dbt.ref("contrast_deltas").filter(
        f"metric = '{metric}' and embedder = '{embedder}' and reranker = '{reranker}'"
    ).order("contrast, corpus, embedder, reranker, metric, cluster_id, query_id")
    return mixedlm_table(deltas.to_arrow_table())
