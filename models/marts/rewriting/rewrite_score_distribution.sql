{{ config(tags=['rewriting']) }}
-- The score scale of each strategy's merged lists, so max-score mixing is inspectable: a multi-text
-- strategy mixes cross-encoder scores of (variant or passage, chunk) and (query, chunk) pairs when it
-- reranks with the searched text (rewriting.rerank_with: text), one scale when it reranks with the
-- original query (rerank_with: original). Per cell x strategy, per seed and pooled over seeds
-- (scope 'seed' / 'pooled', seed NULL), and per source of the document's score: 'all' documents,
-- 'original' (its score came from the original query's list, variant_idx 0) or 'variant' (from an
-- LLM text or an S1-ann4 graph other than the first: variant_idx > 0 or a graph's list). Quantiles are
-- DuckDB's quantile_cont (linear interpolation) over the merged documents' scores (rewrite_runs.score,
-- every rank); NaN scores are counted in n_nan and left out.
with docs as (
    select corpus, embedder, reranker, strategy, seed, query_id, rank, score,
        case when variant_idx = 0 then 'original' else 'variant' end as source
    from {{ ref('stg_rewrite_runs') }}
),

sourced as (
    select *, 'all' as which from docs
    union all
    select *, source from docs
),

stats as (
    select
        corpus, embedder, reranker, strategy, which as source,
        case when grouping(seed) = 0 then 'seed' else 'pooled' end as scope,
        seed,
        count(*) filter (where not isnan(score)) as n_docs,
        count(distinct (seed, query_id)) as n_rankings,
        count(*) filter (where isnan(score)) as n_nan,
        min(score) filter (where not isnan(score)) as score_min,
        quantile_cont(score, [0.05, 0.25, 0.5, 0.75, 0.95]) filter (where not isnan(score)) as q,
        max(score) filter (where not isnan(score)) as score_max,
        avg(score order by score) filter (where not isnan(score)) as score_mean,
        quantile_cont(score, 0.5) filter (where rank = 1 and not isnan(score)) as top1_median
    from sourced
    group by grouping sets ((corpus, embedder, reranker, strategy, which, seed), (corpus, embedder, reranker, strategy, which))
)

select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    strategy::varchar as strategy,
    scope::varchar as scope,
    seed::integer as seed,
    source::varchar as source,
    n_rankings::bigint as n_rankings,
    n_docs::bigint as n_docs,
    n_nan::bigint as n_nan,
    score_min::double as score_min,
    q[1]::double as score_p05,
    q[2]::double as score_p25,
    q[3]::double as score_p50,
    q[4]::double as score_p75,
    q[5]::double as score_p95,
    score_max::double as score_max,
    score_mean::double as score_mean,
    top1_median::double as top1_median
from stats
