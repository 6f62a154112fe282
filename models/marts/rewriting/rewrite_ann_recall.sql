{{ config(tags=['rewriting']) }}
-- The ANN loss of the dense stage: per cell x strategy x seed, the recall of each HNSW pool against
-- exact search. A pool of P chunks taken from an HNSW graph (rewrite_text_runs.ann_seed set) has
-- recall = |pool ∩ exact top P| / P, where the exact top P is brute-force inner product with ties by
-- index position (rewrite_text_runs.in_exact, set per dense row by the stage); exact pools
-- (dense: exact, ann_seed NULL) and rows written before in_exact was recorded are not counted.
-- n_pools counts searched texts (a text searched in several graphs, S1-ann4, counts once per graph).
with pools as (
    select corpus, embedder, reranker, strategy, seed, query_id, variant_idx, ann_seed, n_chunks, recall
    from {{ ref('int_rewrite_ann_pools') }}
)

select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    strategy::varchar as strategy,
    seed::integer as seed,
    count(distinct ann_seed)::integer as n_graphs,
    count(*)::bigint as n_pools,
    sum(n_chunks)::bigint as n_chunks,
    {{ stable_avg('recall') }}::double as recall_mean,
    min(recall)::double as recall_min,
    avg((recall = 1)::double)::double as share_full_recall
from pools
group by all
