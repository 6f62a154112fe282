{{ config(materialized='view', tags=['evaluation', 'rewriting']) }}
-- The judgments of every judged query as the doc-level metric kernels read them (udfs/metrics/doc_level.py):
-- the query's qrels relevances in doc_id order, graded (the chunking study's nDCG gain = relevance) and
-- binary (the rewriting study: relevant iff relevance >= 1, gain 1). A view: each reader aggregates it once.
with qrels as (
    select query_id, doc_id, relevance
    from {{ ref('stg_qrels') }}
)

select
    query_id,
    list(relevance::double order by doc_id) as qrels_rel,
    list((relevance >= 1)::double order by doc_id) as qrels_binary
from qrels
group by query_id
