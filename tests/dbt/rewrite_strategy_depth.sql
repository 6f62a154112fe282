-- Fails when a rewriting table names a strategy the seed lacks, or a text keeps more MMR documents
-- than its strategy's depth_k (per searched list: S1-ann4 has one per HNSW graph) (seeds/rewrite_strategies.csv: the one place a strategy and its K live).
{{ config(tags=['rewriting']) }}
with used as (
    select distinct strategy, 'rewrites' as source, 0 as n from {{ ref('stg_rewrites') }}
    union all
    select distinct strategy, 'rewrite_runs', 0 from {{ ref('stg_rewrite_runs') }}
    union all
    select strategy, 'rewrite_text_runs', count(*)
    from {{ ref('stg_rewrite_text_runs') }}
    where stage = 'mmr'
    group by corpus, embedder, reranker, pool, strategy, seed, query_id, variant_idx, ann_seed
)

select u.strategy, u.source, u.n, s.depth_k
from used as u
left join {{ ref('rewrite_strategies') }} as s on s.strategy = u.strategy
where s.strategy is null or u.n > s.depth_k
