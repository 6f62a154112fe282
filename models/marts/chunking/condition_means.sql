{{ config(tags=['evaluation']) }}
-- Exploratory: mean (and sd over queries) of every metric per condition and cell.
select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    condition::varchar as condition,
    metric::varchar as metric,
    count(*)::bigint as n_queries,
    avg(value)::double as mean_value,
    stddev_samp(value)::double as sd_value
from {{ ref('query_metrics') }}
group by all
