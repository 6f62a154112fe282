{{ config(tags=['rewriting']) }}
-- One row per (cell, strategy, seed, query, metric) of a scored ranking: the per-query document metrics
-- as int_rewrite_query_metrics computes them (kernels, binary qrels and list_length are documented
-- there). The analyst's table; the models read the intermediate.
with rewrite_query_metrics as (
    select * from {{ ref('int_rewrite_query_metrics') }}
)

select
    corpus,
    embedder,
    reranker,
    strategy,
    kind,
    seed,
    query_id,
    metric,
    value,
    list_length
from rewrite_query_metrics
