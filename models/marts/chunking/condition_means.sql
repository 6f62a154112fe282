{{ config(tags=['evaluation']) }}
-- Exploratory: mean (and sd over queries) of every metric per condition and cell, with its 95%
-- document-clustered bootstrap interval: the kernel and the B / seed of the contrasts
-- (udfs/stats/bootstrap.py; documents resampled, every query of a drawn document enters; a query without
-- a document is its own cluster), so a paper's per-condition table carries the same uncertainty as
-- its contrasts. Aggregates run over the values in sorted order, so the float sums (and so the
-- table) are bit-identical across builds whatever order query_metrics returns its rows in.
with scored as (
    select *, coalesce(doc_id, query_id) as cluster_id from {{ ref('int_query_metrics') }}
),

lists as (
    select
        corpus, embedder, reranker, condition, metric,
        count(*) as n_queries,
        {{ stable_avg('value') }} as mean_value,
        {{ stable_stddev_samp('value') }} as sd_value,
        list(value order by cluster_id, query_id) as vals,
        list(cluster_id order by cluster_id, query_id) as clusters
    from scored
    group by all
),

boot as (
    select *, cluster_bootstrap(vals, clusters, {{ setting('bootstrap_b') }}, {{ setting('bootstrap_seed') }}) as b
    from lists
)

select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    condition::varchar as condition,
    metric::varchar as metric,
    n_queries::bigint as n_queries,
    b.n_clusters::bigint as n_docs,
    mean_value::double as mean_value,
    sd_value::double as sd_value,
    b.ci_low::double as ci_low,
    b.ci_high::double as ci_high,
    {{ setting('bootstrap_b') }}::bigint as n_boot
from boot
