{{ config(tags=['evaluation']) }}
-- Every query with what evaluation needs and whether it can be scored (status 'ok') or why not.
-- corpus_kind: 'document' for corpora judged by qrels (BEIR, HotpotQA), else 'span' (gold evidence
-- spans). Exclusions (counted per cell in evaluation_exclusions, never silent):
--   no_evidence                 span corpus, no gold span
--   span_outside_document       a span with char_start < 0, char_end <= char_start or past the text end
--   evidence_in_other_document  a span in a document other than the query's
--   no_relevant_qrels           document corpus, no judgment with relevance >= 1
--   structure_fallback          the query's document is indexed with its fixed windows in a condition
--                               that has runs (it lacks that condition's structure: int_condition_chunks),
--                               so no arm is scored on it (one corpus, one query set for every arm)
with kinds as (
    select q.corpus, case when count(r.query_id) > 0 then 'document' else 'span' end as corpus_kind
    from {{ ref('stg_queries') }} as q
    left join {{ ref('stg_qrels') }} as r on r.query_id = q.query_id
    group by q.corpus
),

span_checks as (
    select
        e.query_id,
        count(*) as n_spans,
        count(*) filter (
            where e.char_start < 0 or e.char_end <= e.char_start or d.doc_id is null
                or e.char_end > length(d.text)
        ) as n_outside,
        count(*) filter (where e.doc_id is distinct from q.doc_id) as n_other_doc
    from {{ ref('stg_evidence') }} as e
    inner join {{ ref('stg_queries') }} as q on q.query_id = e.query_id
    left join {{ ref('stg_documents') }} as d on d.doc_id = e.doc_id
    group by e.query_id
),

fallback_docs as (
    select distinct cc.doc_id
    from {{ ref('int_condition_chunks') }} as cc
    inner join (select distinct corpus, condition from {{ ref('stg_runs') }}) as ran
        on ran.corpus = cc.corpus and ran.condition = cc.condition
    where cc.is_fallback
),

qrel_checks as (
    select query_id, count(*) filter (where relevance >= 1) as n_relevant
    from {{ ref('stg_qrels') }}
    group by query_id
)

select
    q.corpus,
    q.query_id,
    q.doc_id,
    q.query_type,
    d.topic_bucket,
    k.corpus_kind,
    coalesce(s.n_spans, 0) as n_spans,
    coalesce(r.n_relevant, 0) as n_relevant_qrels,
    case
        when k.corpus_kind = 'document' then
            case when coalesce(r.n_relevant, 0) = 0 then 'no_relevant_qrels' else 'ok' end
        when s.query_id is null then 'no_evidence'
        when s.n_outside > 0 then 'span_outside_document'
        when s.n_other_doc > 0 then 'evidence_in_other_document'
        when f.doc_id is not null then 'structure_fallback'
        else 'ok'
    end as status
from {{ ref('stg_queries') }} as q
inner join kinds as k on k.corpus = q.corpus
left join {{ ref('stg_documents') }} as d on d.doc_id = q.doc_id
left join span_checks as s on s.query_id = q.query_id
left join qrel_checks as r on r.query_id = q.query_id
left join fallback_docs as f on f.doc_id = q.doc_id
