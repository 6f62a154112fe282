{{ config(tags=['evaluation']) }}
-- Exploratory: mean (and sd over queries) of every metric per condition and cell.
-- Aggregates run over the values in sorted order, so the float sums (and so the table) are
-- bit-identical across builds whatever order query_metrics returns its rows in.
select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    condition::varchar as condition,
    metric::varchar as metric,
    count(*)::bigint as n_queries,
    avg(value order by value)::double as mean_value,
    stddev_samp(value order by value)::double as sd_value
from {{ ref('query_metrics') }}
group by all
