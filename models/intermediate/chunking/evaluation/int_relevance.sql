{{ config(materialized='view', tags=['evaluation']) }}
-- Every run row of a scorable query with the ranked chunk's content offsets, its token cost and its
-- relevance. Span corpora: the verdict of int_relevance_pool (a chunk of another document is never
-- relevant, and covers nothing: same_doc = false). Document corpora: the qrels relevance of the
-- chunk's document (gain; relevant iff >= 1). Queries that are not scorable are counted in
-- evaluation_exclusions. A run chunk its condition does not index is an error (raised by error() as
-- soon as anything reads the row), never a silently irrelevant hit.
-- A view: int_query_metrics reads it once (materializing 10M run rows would cost more than the joins).
select
    r.corpus,
    r.embedder,
    r.reranker,
    r.condition,
    r.query_id,
    r.rank,
    r.chunk_id,
    r.score,
    q.corpus_kind,
    case
        when ct.chunk_id is null then error(
            'runs: ' || r.condition || ' ranks chunk ' || r.chunk_id || ' for ' || r.query_id
            || ', but int_condition_texts has no such chunk for that condition; rerun `ragwh retrieve` '
            || 'after rebuilding int_condition_texts')
        else ct.doc_id
    end as chunk_doc_id,
    coalesce(ct.doc_id = q.doc_id, false) as same_doc,
    ct.char_start,
    ct.char_end,
    ct.content_tokens,
    ct.prefix_tokens,
    case q.corpus_kind
        when 'span' then coalesce(p.is_relevant, false)
        else coalesce(qr.relevance, 0) >= 1
    end as is_relevant,
    case q.corpus_kind
        when 'span' then case when coalesce(p.is_relevant, false) then 1 else 0 end
        else coalesce(qr.relevance, 0)
    end as gain
from {{ ref('stg_runs') }} as r
inner join {{ ref('int_eval_queries') }} as q on q.query_id = r.query_id and q.status = 'ok'
left join {{ ref('int_condition_texts') }} as ct on ct.condition = r.condition and ct.chunk_id = r.chunk_id
left join (
    select condition, query_id, chunk_id, is_relevant from {{ ref('int_relevance_pool') }} where is_relevant
) as p
    on p.condition = r.condition and p.query_id = r.query_id and p.chunk_id = r.chunk_id
left join {{ ref('stg_qrels') }} as qr on qr.query_id = r.query_id and qr.doc_id = ct.doc_id
