{{ config(tags=['evaluation']) }}
-- Every chunk a condition holds of a scorable span query's document, with its verdict under the
-- relevance rule (macro span_relevant: >= 50% of a span's characters covered or >= 80% of the chunk's
-- characters inside a span), on chunk content offsets (prefixes never create relevance).
-- overlaps_evidence: the chunk shares at least one character with a gold span (only such chunks
-- can gain coverage). The pool is what the ideal rankings (cov-nDCG's greedy IDCG, binary nDCG's R) are built from.
with q as (
    select corpus, query_id, doc_id
    from {{ ref('int_eval_queries') }}
    where corpus_kind = 'span' and status = 'ok'
),

pool as (
    select ct.condition, q.corpus, q.query_id, ct.chunk_id, ct.doc_id, ct.char_start, ct.char_end
    from q
    inner join {{ ref('int_condition_texts') }} as ct on ct.doc_id = q.doc_id
),

hits as (
    select
        p.condition, p.query_id, p.chunk_id,
        count(*) filter (
            where {{ span_relevant('p.char_start', 'p.char_end', 'e.char_start', 'e.char_end') }}
        ) as n_spans_relevant
    from pool as p
    inner join {{ ref('stg_evidence') }} as e
        on e.query_id = p.query_id
        and e.doc_id = p.doc_id
        and {{ span_overlap('p.char_start', 'p.char_end', 'e.char_start', 'e.char_end') }} > 0
    group by p.condition, p.query_id, p.chunk_id
)

select
    p.condition,
    p.corpus,
    p.query_id,
    p.chunk_id,
    p.doc_id,
    p.char_start,
    p.char_end,
    h.chunk_id is not null as overlaps_evidence,
    coalesce(h.n_spans_relevant, 0) as n_spans_relevant,
    coalesce(h.n_spans_relevant, 0) > 0 as is_relevant
from pool as p
left join hits as h
    on h.condition = p.condition and h.query_id = p.query_id and h.chunk_id = p.chunk_id
