{{ config(tags=['conditions']) }}
-- One row per (condition, chunk) a condition indexes, with the prefix placed before the content.
--   chunkset: fixed | doc | 'structural:' || structure, where structure 'induced' resolves to
--             'induced:' || setting('inducer') (default texttiling) and 'gold' stays 'gold';
--   prefix:   '' (0 tokens) for prefix_kind 'none'; otherwise the chunk_prefixes row of that kind at
--             depth prefix_depth (llm_context and title rows have depth 0; DOC's title prefix is BEIR's
--             title || ' ', so a document is embedded as title, a space, its text).
-- A chunk whose condition needs a prefix that is not loaded yet (e.g. A1 before the LLM stage) is
-- absent: nothing is faked. Until induced structure is loaded, the A-family and P have no rows.
-- One corpus per run: in a corpus where a structural condition's chunkset exists, a
-- document that lacks it (its induced structure failed verification, or it has no gold tree) is
-- indexed with its fixed windows and no prefix (is_fallback = true), so every condition searches
-- the same documents; int_eval_queries excludes the queries of such documents from every arm.
with conditions as (
    select
        condition,
        chunking,
        prefix_kind,
        prefix_depth,
        retrieval,
        case chunking
            when 'structural' then 'structural:'
                || case structure when 'induced' then 'induced:{{ setting("inducer") }}' else structure end
            else chunking
        end as chunkset
    from {{ ref('conditions') }}
),

chunks as (
    select k.*, d.corpus
    from {{ ref('stg_chunks') }} as k
    inner join {{ ref('stg_documents') }} as d on d.doc_id = k.doc_id
),

own as (
    select c.condition, c.prefix_kind, c.prefix_depth, c.retrieval,
        k.*, false as is_fallback
    from conditions as c
    inner join chunks as k on k.chunkset = c.chunkset
),

fallback_docs as (
    -- structural conditions x documents of a corpus that has the condition's chunkset, lacking it
    select distinct c.condition, f.doc_id
    from conditions as c
    inner join (select distinct condition, corpus from own) as present on present.condition = c.condition
    inner join chunks as f on f.chunkset = 'fixed' and f.corpus = present.corpus
    where c.chunking = 'structural'
        and not exists (
            select 1 from chunks as k where k.chunkset = c.chunkset and k.doc_id = f.doc_id
        )
),

fallback as (
    select c.condition, c.prefix_kind, c.prefix_depth, c.retrieval,
        k.*, true as is_fallback
    from fallback_docs as fd
    inner join conditions as c on c.condition = fd.condition
    inner join chunks as k on k.chunkset = 'fixed' and k.doc_id = fd.doc_id
),

indexed as (
    select * from own
    union all
    select * from fallback
)

select
    i.condition,
    i.corpus,
    i.chunk_id,
    i.doc_id,
    i.chunkset,
    i.chunk_idx,
    i.char_start,
    i.char_end,
    i.section_idx,
    i.content_tokens,
    i.prefix_kind,
    i.prefix_depth,
    i.retrieval,
    coalesce(p.prefix, '') as prefix,
    coalesce(p.prefix_tokens, 0) as prefix_tokens,
    i.is_fallback
from indexed as i
left join {{ ref('stg_chunk_prefixes') }} as p
    on not i.is_fallback
    and p.chunk_id = i.chunk_id
    and p.prefix_kind = i.prefix_kind
    and p.depth = i.prefix_depth
where i.prefix_kind = 'none' or i.is_fallback or p.chunk_id is not null
