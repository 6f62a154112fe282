{{ config(tags=['rewriting']) }}
-- Choosing tau, each rule applied to the cell's queries and compared with the best tau of the sweep grid:
--   paper         the paper's: tau fixed at var router_paper_tau (0.65) for every dataset, no tuning
-- and the project's additions, the midpoint rule tau = (mean top-1 score of the (query, seed) pairs the
-- baseline hits + mean of those it misses) / 2 (HIT@10 at rank 10), fitted three ways:
--   same_dataset  fitted on the cell's own queries (the per-dataset in-sample midpoint)
--   transfer      fitted on another corpus (source) with the same embedder and reranker
--   cross_fit     K = var router_folds folds of queries (md5_number(query_id) % K): each fold's queries
--                 use the tau fitted on the other folds (no query sets its own threshold); tau = the
--                 mean of the fold taus, n_folds how many
-- A fit with no hit or no miss has no tau: its queries are not expanded (n_folds_without_tau counts it).
--   router_value, pct_expanded, deltas: as in rewrite_router_sweep (3-seed means), point estimates
--   best_grid_tau / best_grid_value: the sweep's tau with the highest router_value (ties: the lower tau)
--   gap = router_value - best_grid_value (what choosing by the rule loses against the best grid tau
--         chosen with hindsight; positive when the rule's tau beats every grid tau)
with choices as (
    select * from {{ ref('int_rewrite_router_tau_fits') }}
),

choice_taus as (
    select corpus, embedder, reranker, rule, source, {{ stable_avg('tau') }} as tau, count(*) as n_folds,
        count(*) filter (where tau is null) as n_folds_without_tau
    from choices
    group by all
),

applied as (
    select c.rule, c.source, r.*, coalesce(r.top1_score < c.tau, false) as expanded
    from {{ ref('int_rewrite_router_queries') }} as r
    inner join choices as c
        on c.corpus = r.corpus and c.embedder = r.embedder and c.reranker = r.reranker
        and (c.fold is null or c.fold = r.fold)
),

seed_means as (
    select corpus, embedder, reranker, helper, rule, source, metric, seed,
        {{ stable_avg('case when expanded then merge_value else baseline_value end') }} as router_value,
        {{ stable_avg('baseline_value') }} as baseline_value, {{ stable_avg('merge_value') }} as merge_value,
        {{ stable_avg('case when expanded then 1.0 else 0.0 end') }} as pct_expanded
    from applied
    group by all
),

means as (
    select corpus, embedder, reranker, helper, rule, source, metric,
        {{ stable_avg('router_value') }} as router_value, {{ stable_avg('baseline_value') }} as baseline_value,
        {{ stable_avg('merge_value') }} as merge_value, {{ stable_avg('pct_expanded') }} as pct_expanded
    from seed_means
    group by all
),

costs as (
    select corpus, embedder, reranker, helper, rule, source, metric,
        coalesce(sum(n_calls) filter (where expanded), 0) / count(*) as calls_per_query,
        coalesce(sum(prompt_tokens + completion_tokens) filter (where expanded), 0) / count(*) as tokens_per_query
    from applied
    group by all
),

best_grid as (
    select corpus, embedder, reranker, helper, metric, tau as best_grid_tau, router_value as best_grid_value
    from {{ ref('rewrite_router_sweep') }}
    qualify row_number() over (partition by corpus, embedder, reranker, helper, metric
                               order by router_value desc, tau) = 1
)

select
    m.corpus::varchar as corpus,
    m.embedder::varchar as embedder,
    m.reranker::varchar as reranker,
    m.helper::varchar as helper,
    m.rule::varchar as rule,
    m.source::varchar as source,
    m.metric::varchar as metric,
    t.tau::double as tau,
    t.n_folds::integer as n_folds,
    t.n_folds_without_tau::integer as n_folds_without_tau,
    m.pct_expanded::double as pct_expanded,
    m.router_value::double as router_value,
    m.baseline_value::double as baseline_value,
    m.merge_value::double as merge_value,
    (m.router_value - m.baseline_value)::double as delta_vs_baseline,
    (m.router_value - m.merge_value)::double as delta_vs_merge,
    c.calls_per_query::double as calls_per_query,
    c.tokens_per_query::double as tokens_per_query,
    g.best_grid_tau::double as best_grid_tau,
    g.best_grid_value::double as best_grid_value,
    (m.router_value - g.best_grid_value)::double as gap
from means as m
inner join choice_taus as t
    on t.corpus = m.corpus and t.embedder = m.embedder and t.reranker = m.reranker
    and t.rule = m.rule and t.source = m.source
inner join costs as c
    on c.corpus = m.corpus and c.embedder = m.embedder and c.reranker = m.reranker and c.helper = m.helper
    and c.rule = m.rule and c.source = m.source and c.metric = m.metric
left join best_grid as g
    on g.corpus = m.corpus and g.embedder = m.embedder and g.reranker = m.reranker
    and g.helper = m.helper and g.metric = m.metric
