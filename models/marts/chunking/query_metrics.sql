{{ config(tags=['evaluation']) }}
-- One row per (corpus, embedder, reranker, condition, query, metric): the per-query scores every
-- contrast and summary is built from, as int_query_metrics computes them (the metric kernels, the
-- judgments and the exclusions are documented there). The analyst's table; the models read the
-- intermediate.
with query_metrics as (
    select * from {{ ref('int_query_metrics') }}
)

select
    corpus,
    embedder,
    reranker,
    condition,
    query_id,
    doc_id,
    query_type,
    topic_bucket,
    metric,
    value
from query_metrics
