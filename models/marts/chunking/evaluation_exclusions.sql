{{ config(tags=['evaluation']) }}
-- The evaluation funnel per (cell, condition): every query with a run lands in exactly one reason.
--   scored                      in query_metrics
--   nan_score                   the ranking holds a NaN score
--   unknown_query               run for a query_id missing from queries
--   no_evidence | span_outside_document | evidence_in_other_document | no_relevant_qrels
--   | structure_fallback        see int_eval_queries (structure_fallback: the query's document is
--                               indexed with its fixed windows in some arm: excluded from every arm)
-- n_docs: distinct documents of those queries (corpus-level queries without a document count none).
--   no_condition_chunks         the condition holds no chunk of the query's document (no ideal ranking)
with run_queries as (
    select corpus, embedder, reranker, condition, query_id, has_nan
    from {{ ref('int_run_queries') }}
),

scored as (
    select distinct corpus, embedder, reranker, condition, query_id
    from {{ ref('int_query_metrics') }}
)

select
    r.corpus::varchar as corpus,
    r.embedder::varchar as embedder,
    r.reranker::varchar as reranker,
    r.condition::varchar as condition,
    (case
        when q.query_id is null then 'unknown_query'
        when q.status <> 'ok' then q.status
        when r.has_nan then 'nan_score'
        when s.query_id is not null then 'scored'
        else 'no_condition_chunks'
    end)::varchar as reason,
    count(*)::bigint as n_queries,
    count(distinct q.doc_id)::bigint as n_docs
from run_queries as r
left join {{ ref('int_eval_queries') }} as q on q.query_id = r.query_id
left join scored as s
    on s.corpus = r.corpus and s.embedder = r.embedder and s.reranker = r.reranker
    and s.condition = r.condition and s.query_id = r.query_id
group by all
