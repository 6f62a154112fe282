{{ config(tags=['rewriting']) }}
-- One row per ranking of rewrite_runs (cell x strategy x seed x query) with the strategy's kind from
-- the seed (a strategy the seed lacks fails this model's relationships test), whether it can be
-- scored, its top-1 score (the router's gate), the binary relevance of its documents in rank order
-- (qrels relevance >= 1) and its top-10 documents.
-- status: scored | nan_score (a NaN score in the list) | unknown_query | the int_eval_queries status
-- (no_relevant_qrels, ...). Counted per reason in rewrite_exclusions; only 'scored' rankings are scored.
with rows as (
    select
        r.corpus, r.embedder, r.reranker, r.strategy, r.seed, r.query_id, r.rank, r.doc_id, r.score,
        coalesce(q.relevance, 0) >= 1 as relevant
    from {{ ref('stg_rewrite_runs') }} as r
    left join {{ ref('stg_qrels') }} as q on q.query_id = r.query_id and q.doc_id = r.doc_id
),

lists as (
    select
        corpus, embedder, reranker, strategy, seed, query_id,
        count(*) as n_docs,
        arg_min(score, rank) as top1_score,
        bool_or(isnan(score)) as has_nan,
        list(relevant::double order by rank) as run_rel,
        list(doc_id order by rank) filter (where rank <= 10) as top10
    from rows
    group by corpus, embedder, reranker, strategy, seed, query_id
)

select
    l.corpus::varchar as corpus,
    l.embedder::varchar as embedder,
    l.reranker::varchar as reranker,
    l.strategy::varchar as strategy,
    s.kind::varchar as kind,
    l.seed::integer as seed,
    l.query_id::varchar as query_id,
    (case
        when e.query_id is null then 'unknown_query'
        when e.status <> 'ok' then e.status
        when l.has_nan then 'nan_score'
        else 'scored'
    end)::varchar as status,
    e.n_relevant_qrels::integer as n_relevant,
    l.n_docs::integer as n_docs,
    l.top1_score::double as top1_score,
    l.run_rel,
    coalesce(l.top10, []::varchar[]) as top10
from lists as l
left join {{ ref('rewrite_strategies') }} as s on s.strategy = l.strategy
left join {{ ref('int_eval_queries') }} as e on e.query_id = l.query_id
