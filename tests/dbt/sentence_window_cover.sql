-- Fails (returns rows) when the overlapping sentence windows ('sentence:<tokens>/<overlap>', the
-- rewriting study's chunkset) do not cover a document's body in order: per (chunkset, doc_id), in
-- chunk_idx order numbered 0..n-1, the first starts at the first paragraph's char_start, the last ends
-- at the last paragraph's char_end, each starts after the previous one's start and no later than its
-- end (windows may overlap, never leave a gap), and none is empty.
with ordered as (
    select
        chunkset,
        doc_id,
        chunk_idx,
        char_start,
        char_end,
        lag(char_start) over (partition by chunkset, doc_id order by chunk_idx) as previous_start,
        lag(char_end) over (partition by chunkset, doc_id order by chunk_idx) as previous_end,
        row_number() over (partition by chunkset, doc_id order by chunk_idx) - 1 as position,
        count(*) over (partition by chunkset, doc_id) as n_chunks
    from {{ ref('stg_chunks') }}
    where starts_with(chunkset, 'sentence:')
),

body as (
    select doc_id, min(char_start) as body_start, max(char_end) as body_end
    from {{ ref('stg_paragraphs') }}
    group by doc_id
)

select
    o.*,
    b.body_start,
    b.body_end
from ordered as o
left join body as b on b.doc_id = o.doc_id
where b.doc_id is null
    or o.chunk_idx <> o.position
    or o.char_end <= o.char_start
    or (o.position = 0 and o.char_start <> b.body_start)
    or (o.position > 0 and (o.char_start <= o.previous_start or o.char_start > o.previous_end))
    or (o.position = o.n_chunks - 1 and o.char_end <> b.body_end)
