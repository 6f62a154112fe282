{{ config(materialized='view', tags=['rewriting']) }}
-- Every pool of P chunks the dense stage took from an HNSW graph (rewrite_text_runs.ann_seed set), with
-- its recall against exact search: |pool ∩ exact top P| / P, where the exact top P is brute-force inner
-- product with ties by index position (rewrite_text_runs.in_exact, set per dense row by the stage). Exact
-- pools (ann_seed NULL) and rows written before in_exact was recorded are left out. What rewrite_ann_recall
-- summarizes per cell x strategy x seed.
with dense as (
    select corpus, embedder, reranker, strategy, seed, query_id, variant_idx, ann_seed, in_exact
    from {{ ref('stg_rewrite_text_runs') }}
    where stage = 'dense' and ann_seed is not null and in_exact is not null
)

select
    corpus, embedder, reranker, strategy, seed, query_id, variant_idx, ann_seed,
    count(*) as n_chunks,
    avg(in_exact::double) as recall
from dense
group by all
