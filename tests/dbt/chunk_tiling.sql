-- Fails (returns rows) on any gap, overlap, empty chunk or misnumbered chunk in any chunkset:
-- chunks of one (chunkset, doc_id), in chunk_idx order, must be numbered 0..n-1, start at the first
-- paragraph's char_start, each start where the previous ended, the last end at the last paragraph's
-- char_end (docs/design.md: chunks tile the body exactly and contiguously). The rewriting study's
-- overlapping sentence windows ('sentence:<tokens>/<overlap>') do not tile by design: their own test is
-- sentence_window_cover.sql.
with ordered as (
    select
        chunkset,
        doc_id,
        chunk_idx,
        char_start,
        char_end,
        lag(char_end) over (partition by chunkset, doc_id order by chunk_idx) as previous_end,
        row_number() over (partition by chunkset, doc_id order by chunk_idx) - 1 as position,
        count(*) over (partition by chunkset, doc_id) as n_chunks
    from {{ ref('stg_chunks') }}
    where not starts_with(chunkset, 'sentence:')
),

body as (
    select doc_id, min(char_start) as body_start, max(char_end) as body_end
    from {{ ref('stg_paragraphs') }}
    group by doc_id
)

select
    o.*,
    b.body_start,
    b.body_end,
    case
        when b.doc_id is null then 'document has no paragraphs'
        when o.chunk_idx <> o.position then 'chunk_idx not consecutive from 0'
        when o.char_end <= o.char_start then 'empty or inverted chunk'
        when o.position = 0 and o.char_start <> b.body_start then 'first chunk does not start at the body start'
        when o.position > 0 and o.char_start > o.previous_end then 'gap before chunk'
        when o.position > 0 and o.char_start < o.previous_end then 'overlap with previous chunk'
        else 'last chunk does not end at the body end'
    end as violation
from ordered as o
left join body as b on b.doc_id = o.doc_id
where b.doc_id is null
    or o.chunk_idx <> o.position
    or o.char_end <= o.char_start
    or (o.position = 0 and o.char_start <> b.body_start)
    or (o.position > 0 and o.char_start <> o.previous_end)
    or (o.position = o.n_chunks - 1 and o.char_end <> b.body_end)
