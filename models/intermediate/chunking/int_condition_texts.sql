{{ config(tags=['conditions']) }}
-- The exact text to embed per condition chunk: prefix || content, where content is
-- documents.text[char_start:char_end] stripped exactly like Python's str.strip() (macro chunk_content).
-- text_hash = sha256 hex of text, the key of embeddings. content_tokens and prefix_tokens are counted
-- separately by ingest (embedder tokenizer, no special tokens). is_fallback: a document indexed with
-- its fixed windows because it lacks the condition's structure (int_condition_chunks).
with texts as (
    select
        cc.condition,
        cc.corpus,
        cc.chunk_id,
        cc.doc_id,
        cc.chunkset,
        cc.char_start,
        cc.char_end,
        cc.prefix || {{ chunk_content('d.text', 'cc.char_start', 'cc.char_end') }} as text,
        cc.content_tokens,
        cc.prefix_tokens,
        cc.is_fallback
    from {{ ref('int_condition_chunks') }} as cc
    inner join {{ ref('stg_documents') }} as d on d.doc_id = cc.doc_id
)

select
    condition,
    corpus,
    chunk_id,
    doc_id,
    chunkset,
    char_start,
    char_end,
    text,
    sha256(text) as text_hash,
    content_tokens,
    prefix_tokens,
    is_fallback
from texts
