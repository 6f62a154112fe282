{{ config(tags=['rewriting']) }}
-- The router's tau per cell (one row per cell x rule x source x fold; the means run on one DuckDB thread
-- (profiles.yml) in sorted order, so a rebuild gives identical taus):
--   paper         the paper's tau: fixed, var router_paper_tau (0.65, its EnterpriseRAG-Bench midpoint
--                 0.66 rounded down), the same for every dataset, no tuning; source 'fixed', fold NULL
-- and, as the project's additions, the midpoint rule tau = (mean top-1 score of the (query, seed) pairs
-- the baseline hits + mean of those it misses) / 2 (HIT@10) fitted three ways:
--   same_dataset  fitted on the cell's own queries (the per-dataset in-sample midpoint); fold NULL
--   transfer      fitted on another corpus (source) with the same embedder and reranker; fold NULL
--   cross_fit     per fold of K = var router_folds (md5_number(query_id) % K): fitted on the OTHER folds,
--                 applied to this fold's queries (no query sets its own threshold)
-- A fitted tau is NULL when the fit has no hit or no miss (its queries are then not expanded).
-- Read by rewrite_router_tau (the rules against the grid) and rewrite_query_type_cuts (the router by type).
with base as (
    select distinct corpus, embedder, reranker, seed, query_id, fold, top1_score, baseline_value as hit
    from {{ ref('int_rewrite_router_queries') }}
    where metric = 'HIT@10'
),

fits as (
    select corpus, embedder, reranker,
        {{ stable_avg('top1_score') }} filter (where hit = 1) as hit_mean,
        {{ stable_avg('top1_score') }} filter (where hit = 0) as miss_mean
    from base
    group by all
),

folds as (
    select distinct corpus, embedder, reranker, fold from base
),

fold_fits as (
    select f.corpus, f.embedder, f.reranker, f.fold,
        {{ stable_avg('b.top1_score') }} filter (where b.hit = 1) as hit_mean,
        {{ stable_avg('b.top1_score') }} filter (where b.hit = 0) as miss_mean
    from folds as f
    inner join base as b
        on b.corpus = f.corpus and b.embedder = f.embedder and b.reranker = f.reranker and b.fold <> f.fold
    group by all
),

cells as (
    select distinct corpus, embedder, reranker from base
),

choices as (
    select corpus, embedder, reranker, 'paper' as rule, 'fixed' as source, null::integer as fold,
        {{ setting('router_paper_tau') }}::double as tau
    from cells
    union all
    select corpus, embedder, reranker, 'same_dataset' as rule, corpus as source, null::integer as fold,
        (hit_mean + miss_mean) / 2 as tau
    from fits
    union all
    select t.corpus, t.embedder, t.reranker, 'transfer', s.corpus as source, null::integer,
        (s.hit_mean + s.miss_mean) / 2
    from fits as t
    inner join fits as s on s.embedder = t.embedder and s.reranker = t.reranker and s.corpus <> t.corpus
    union all
    select corpus, embedder, reranker, 'cross_fit', corpus as source, fold, (hit_mean + miss_mean) / 2
    from fold_fits
)

select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    rule::varchar as rule,
    source::varchar as source,
    fold::integer as fold,
    tau::double as tau
from choices
