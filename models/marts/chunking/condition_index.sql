{{ config(tags=['conditions']) }}
-- What each condition's index holds per corpus (one corpus per run): documents and
-- chunks, and how many of them are fallback fixed windows of documents lacking the condition's
-- structure (int_condition_chunks; their queries are excluded from every arm: int_eval_queries,
-- evaluation_exclusions reason structure_fallback). Within a corpus every chunk condition (all but
-- DOC) indexes the same documents wherever its chunkset exists.
select
    corpus::varchar as corpus,
    condition::varchar as condition,
    count(distinct doc_id)::bigint as n_docs,
    count(*)::bigint as n_chunks,
    (count(distinct doc_id) filter (where is_fallback))::bigint as n_fallback_docs,
    (count(*) filter (where is_fallback))::bigint as n_fallback_chunks,
    avg(content_tokens)::double as mean_content_tokens,
    avg(prefix_tokens)::double as mean_prefix_tokens
from {{ ref('int_condition_texts') }}
group by all
