{{ config(materialized='view', tags=['rewriting']) }}
-- Every answer the reader stage wrote (reader_answers): per (cell, setting, helper, tau, seed, query) the
-- reader's answer text over the top_k passages it saw. What rewrite_answer_scores scores.
select
    corpus,
    embedder,
    reranker,
    setting,
    helper,
    tau,
    seed,
    query_id,
    top_k,
    answer
from {{ ref('stg_reader_answers') }}
