{{ config(tags=['conditions']) }}
-- One row per (condition, chunk) a condition indexes, with the prefix placed before the content.
--   chunkset: fixed | doc | 'structural:' || structure, where structure 'induced' resolves to
--             'induced:' || var('inducer') (default texttiling) and 'gold' stays 'gold';
--   prefix:   '' (0 tokens) for prefix_kind 'none'; otherwise the chunk_prefixes row of that kind at
--             depth prefix_depth (llm_context and title rows have depth 0; DOC's title prefix is BEIR's
--             title || ' ', so a document is embedded as title, a space, its text).
-- A chunk whose condition needs a prefix that is not loaded yet (e.g. A1 before the LLM stage) is
-- absent: nothing is faked. Until induced structure is loaded, the A-family and P have no rows.
with conditions as (
    select
        condition,
        prefix_kind,
        prefix_depth,
        retrieval,
        case chunking
            when 'structural' then 'structural:'
                || case structure when 'induced' then 'induced:{{ var("inducer") }}' else structure end
            else chunking
        end as chunkset
    from {{ ref('conditions') }}
)

select
    c.condition,
    d.corpus,
    k.chunk_id,
    k.doc_id,
    k.chunkset,
    k.chunk_idx,
    k.char_start,
    k.char_end,
    k.section_idx,
    k.content_tokens,
    c.prefix_kind,
    c.prefix_depth,
    c.retrieval,
    coalesce(p.prefix, '') as prefix,
    coalesce(p.prefix_tokens, 0) as prefix_tokens
from conditions as c
inner join {{ ref('stg_chunks') }} as k on k.chunkset = c.chunkset
inner join {{ ref('stg_documents') }} as d on d.doc_id = k.doc_id
left join {{ ref('stg_chunk_prefixes') }} as p
    on p.chunk_id = k.chunk_id
    and p.prefix_kind = c.prefix_kind
    and p.depth = c.prefix_depth
where c.prefix_kind = 'none' or p.chunk_id is not null
