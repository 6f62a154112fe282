{{ config(tags=['evaluation']) }}
-- Metrics cut deeper than their run was retrieved: R@50 of a 2-deep run counts only the 2 chunks it
-- returned. A run this project retrieves never lands here (the build fails instead, test
-- run_depth_covers_cutoffs); an imported run is scored as submitted, trec_eval's convention, and every
-- (run, metric) whose rank cutoff (`@N`; the token budgets of TBC@N are not ranks) exceeds its depth k
-- is listed here, with how many of its scored queries have fewer than N chunks ranked.
with cut as (
    select corpus, embedder, reranker, condition, metric,
        regexp_extract(metric, '@([0-9]+)$', 1) as cutoff, count(*) as n_queries
    from {{ ref('query_metrics') }}
    where not starts_with(metric, 'TBC')
    group by all
),

shallow as (
    select c.*, c.cutoff::integer as cut_at, m.k, coalesce(m.system_kind, 'dense') as system_kind
    from cut as c
    join {{ ref('stg_run_manifest') }} as m using (corpus, embedder, reranker, condition)
    where c.cutoff <> '' and c.cutoff::integer > m.k
),

depths as (
    select corpus, embedder, reranker, condition, query_id, count(*) as n_ranked
    from {{ ref('stg_runs') }}
    where (corpus, embedder, reranker, condition) in (select (corpus, embedder, reranker, condition) from shallow)
    group by all
)

select
    s.corpus::varchar as corpus,
    s.embedder::varchar as embedder,
    s.reranker::varchar as reranker,
    s.condition::varchar as condition,
    s.metric::varchar as metric,
    s.system_kind::varchar as system_kind,
    s.cut_at::integer as cutoff,
    s.k::integer as run_depth,
    s.n_queries::bigint as n_queries,
    (select count(*) from {{ ref('query_metrics') }} as q
        join depths as d using (corpus, embedder, reranker, condition, query_id)
        where q.corpus = s.corpus and q.embedder = s.embedder and q.reranker = s.reranker
          and q.condition = s.condition and q.metric = s.metric and d.n_ranked < s.cut_at)::bigint as n_short
from shallow as s
