-- Fails when a rewriting table names a strategy the seed lacks, or a text keeps more MMR documents
-- than it may (seeds/rewrite_strategies.csv: the one place a strategy and its K live). Per searched
-- list (S1-ann4 has one per HNSW graph): a text among several keeps at most its strategy's depth_k;
-- a strategy's only text keeps exactly the merged list (its MMR order, max_merged documents).
{{ config(tags=['rewriting']) }}
with texts as (
    select corpus, embedder, reranker, strategy, seed, query_id, variant_idx, ann_seed, count(*) as n,
        count(*) over (partition by corpus, embedder, reranker, strategy, seed, query_id) as n_texts
    from {{ ref('stg_rewrite_text_runs') }}
    where stage = 'mmr'
    group by corpus, embedder, reranker, pool, strategy, seed, query_id, variant_idx, ann_seed
),

merged as (
    select corpus, embedder, reranker, strategy, seed, query_id, count(*) as n_merged
    from {{ ref('stg_rewrite_runs') }}
    group by all
),

used as (
    select distinct strategy, 'rewrites' as source, 0 as n, false as single, 0 as n_merged
    from {{ ref('stg_rewrites') }}
    union all
    select distinct strategy, 'rewrite_runs', 0, false, 0 from {{ ref('stg_rewrite_runs') }}
    union all
    select t.strategy, 'rewrite_text_runs', t.n, t.n_texts = 1, coalesce(m.n_merged, 0)
    from texts as t
    left join merged as m using (corpus, embedder, reranker, strategy, seed, query_id)
)

select u.strategy, u.source, u.n, u.single, u.n_merged, s.depth_k
from used as u
left join {{ ref('rewrite_strategies') }} as s on s.strategy = u.strategy
where s.strategy is null
    or (not u.single and u.n > s.depth_k)
    or (u.single and u.n <> u.n_merged)
