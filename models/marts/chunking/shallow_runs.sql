{{ config(tags=['evaluation']) }}
-- Metrics cut deeper than their run was retrieved: R@50 of a 2-deep run counts only the 2 chunks it
-- returned. A run this project retrieves never lands here (the build fails instead, test
-- run_depth_covers_cutoffs); an imported run is scored as submitted, trec_eval's convention, and every
-- (run, metric) whose rank cutoff (`@N`; the token budgets of TBC@N are not ranks) exceeds the depth of
-- any of its queries' lists is listed here, with how many of its scored queries have fewer than N chunks
-- ranked (a query the run does not rank at all counts as 0 deep).
with imported as (
    select corpus, embedder, reranker, condition, k, system_kind
    from {{ ref('int_run_systems') }}
    where system_kind = 'imported'
),

cut as (
    select corpus, embedder, reranker, condition, metric, query_id,
        regexp_extract(metric, '@([0-9]+)$', 1)::integer as cut_at
    from {{ ref('int_query_metrics') }}
    where not starts_with(metric, 'TBC') and regexp_extract(metric, '@([0-9]+)$', 1) <> ''
        and (corpus, embedder, reranker, condition) in (select (corpus, embedder, reranker, condition) from imported)
),

depths as (
    select corpus, embedder, reranker, condition, query_id, n_ranked
    from {{ ref('int_run_queries') }}
    where (corpus, embedder, reranker, condition) in (select (corpus, embedder, reranker, condition) from imported)
),

per_metric as (
    select cut.corpus, cut.embedder, cut.reranker, cut.condition, cut.metric, cut.cut_at,
        count(*) as n_queries,
        count(*) filter (where coalesce(depths.n_ranked, 0) < cut.cut_at) as n_short
    from cut
    left join depths using (corpus, embedder, reranker, condition, query_id)
    group by all
)

select
    p.corpus::varchar as corpus,
    p.embedder::varchar as embedder,
    p.reranker::varchar as reranker,
    p.condition::varchar as condition,
    p.metric::varchar as metric,
    i.system_kind::varchar as system_kind,
    p.cut_at::integer as cutoff,
    i.k::integer as run_depth,
    p.n_queries::bigint as n_queries,
    p.n_short::bigint as n_short
from per_metric as p
inner join imported as i using (corpus, embedder, reranker, condition)
where p.n_short > 0
