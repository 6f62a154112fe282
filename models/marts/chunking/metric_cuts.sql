{{ config(tags=['evaluation']) }}
-- Exploratory: per-condition means cut by query_type and by topic_bucket (cut = the column name,
-- cut_value = its value; '(none)' where the query has none, e.g. QASPER topic buckets).
-- Filter it, or see analyses/metric_cuts_*.sql. Means sum the values in sorted order (bit-identical builds).
with long as (
    select corpus, embedder, reranker, condition, metric, 'query_type' as cut,
        coalesce(query_type, '(none)') as cut_value, value
    from {{ ref('int_query_metrics') }}
    union all
    select corpus, embedder, reranker, condition, metric, 'topic_bucket' as cut,
        coalesce(topic_bucket, '(none)') as cut_value, value
    from {{ ref('int_query_metrics') }}
)

select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    condition::varchar as condition,
    metric::varchar as metric,
    cut::varchar as cut,
    cut_value::varchar as cut_value,
    count(*)::bigint as n_queries,
    {{ stable_avg('value') }}::double as mean_value
from long
group by all
