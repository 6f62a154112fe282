{{ config(materialized='view', tags=['rewriting']) }}
-- Every document of every merged ranking of rewrite_runs (cell x strategy x seed x query) at its rank, with
-- its score (the document's max stage score over the strategy's texts) and the text that gave it
-- (variant_idx, 0 = the original query). What rewrite_score_distribution and rewrite_reader_inputs read.
select
    corpus,
    embedder,
    reranker,
    strategy,
    seed,
    query_id,
    rank,
    doc_id,
    score,
    variant_idx
from {{ ref('stg_rewrite_runs') }}
