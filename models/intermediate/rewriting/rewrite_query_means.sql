{{ config(tags=['rewriting']) }}
-- The unit of every paired bootstrap of the study: per (cell, strategy, query, metric) the mean of
-- the per-query metric over the seeds it was scored at (n_seeds of them). Paired deltas between two
-- strategies are differences of these means; the bootstrap resamples queries.
select
    corpus, embedder, reranker, strategy, kind, query_id, metric,
    avg(value) as value,
    count(*)::integer as n_seeds
from {{ ref('rewrite_query_metrics') }}
group by corpus, embedder, reranker, strategy, kind, query_id, metric
