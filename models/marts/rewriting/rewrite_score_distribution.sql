{{ config(tags=['rewriting']) }}
-- The score scale of each strategy's merged lists, so max-score mixing is inspectable: a multi-text
-- strategy mixes cross-encoder scores of (variant or passage, chunk) and (query, chunk) pairs when it
-- reranks with the searched text (rewriting.rerank_with: text), one scale when it reranks with the
-- original query (rerank_with: original). Per cell x strategy, per seed and pooled over seeds
-- (scope 'seed' / 'pooled', seed NULL), and per source of the document's score: 'all' documents,
-- 'original' (its score came from the original query's list, variant_idx 0) or 'variant' (from an
-- LLM text or an S1-ann4 graph other than the first: variant_idx > 0 or a graph's list). Quantiles are
-- DuckDB's quantile_cont (linear interpolation) over the merged documents' scores (rewrite_runs.score,
-- every rank); NaN scores are counted in n_nan and left out. The mean is exact_avg (order-free, within
-- ~2.2e-16 of the exact mean); rankings are counted from one row per ranking, the top-1 median from the
-- rank-1 rows alone (no distinct count, no sort over every row but the quantiles').
with docs as not materialized (  -- inlined into each use (cheaper than materializing 2.6M rows)
    select corpus, embedder, reranker, strategy, seed, query_id, rank, score,
        case when variant_idx = 0 then 'original' else 'variant' end as source
    from {{ ref('int_rewrite_ranked_docs') }}
),

sourced as (
    select *, 'all' as which from docs
    union all
    select *, source from docs
),

rankings as (
    select corpus, embedder, reranker, strategy, seed, query_id,
        bool_or(source = 'original') as has_original,
        bool_or(source = 'variant') as has_variant
    from docs
    group by corpus, embedder, reranker, strategy, seed, query_id
),

ranking_sources as (
    select corpus, embedder, reranker, strategy, seed, 'all' as which from rankings
    union all
    select corpus, embedder, reranker, strategy, seed, 'original' from rankings where has_original
    union all
    select corpus, embedder, reranker, strategy, seed, 'variant' from rankings where has_variant
),

ranking_counts as (
    {{ score_scopes('ranking_sources', 'count(*) as n_rankings') }}
),

top1 as (
    {{ score_scopes('sourced', 'quantile_cont(score, 0.5) as top1_median', 'rank = 1 and not isnan(score)') }}
),

stats as (
    {{ score_scopes('sourced', "count(*) filter (where not isnan(score)) as n_docs,
        count(*) filter (where isnan(score)) as n_nan,
        min(score) filter (where not isnan(score)) as score_min,
        quantile_cont(score, [0.05, 0.25, 0.5, 0.75, 0.95]) filter (where not isnan(score)) as q,
        max(score) filter (where not isnan(score)) as score_max,
        " ~ exact_avg('case when isnan(score) then null else score end') ~ " as score_mean") }}
)

select
    stats.corpus::varchar as corpus,
    stats.embedder::varchar as embedder,
    stats.reranker::varchar as reranker,
    stats.strategy::varchar as strategy,
    stats.scope::varchar as scope,
    stats.seed::integer as seed,
    stats.which::varchar as source,
    ranking_counts.n_rankings::bigint as n_rankings,
    stats.n_docs::bigint as n_docs,
    stats.n_nan::bigint as n_nan,
    stats.score_min::double as score_min,
    stats.q[1]::double as score_p05,
    stats.q[2]::double as score_p25,
    stats.q[3]::double as score_p50,
    stats.q[4]::double as score_p75,
    stats.q[5]::double as score_p95,
    stats.score_max::double as score_max,
    stats.score_mean::double as score_mean,
    top1.top1_median::double as top1_median
from stats
inner join ranking_counts
    on (stats.corpus, stats.embedder, stats.reranker, stats.strategy, stats.which, stats.scope)
        = (ranking_counts.corpus, ranking_counts.embedder, ranking_counts.reranker, ranking_counts.strategy,
           ranking_counts.which, ranking_counts.scope)
    and stats.seed is not distinct from ranking_counts.seed
left join top1
    on (stats.corpus, stats.embedder, stats.reranker, stats.strategy, stats.which, stats.scope)
        = (top1.corpus, top1.embedder, top1.reranker, top1.strategy, top1.which, top1.scope)
    and stats.seed is not distinct from top1.seed
order by corpus, embedder, reranker, strategy, scope, seed, source
