-- Fails when a condition indexes only part of a document's chunkset (e.g. LLM contexts loaded for some
-- chunks of a document but not all): per (condition, doc_id), int_condition_chunks must hold every chunk of
-- the chunkset or none.
with got as (
    select condition, chunkset, doc_id, count(*) as n_chunks
    from {{ ref('int_condition_chunks') }}
    group by condition, chunkset, doc_id
),

want as (
    select chunkset, doc_id, count(*) as n_chunks
    from {{ ref('stg_chunks') }}
    group by chunkset, doc_id
)

select got.condition, got.chunkset, got.doc_id, got.n_chunks, want.n_chunks as expected
from got
inner join want on want.chunkset = got.chunkset and want.doc_id = got.doc_id
where got.n_chunks <> want.n_chunks
