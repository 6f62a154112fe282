{{ config(materialized='view', tags=['evaluation']) }}
-- Every passage an embedder encoded with its token count (instruction + prefix + content, no special
-- tokens) and the tokens of it the model reads (max_seq_length - its special tokens), as the embed stage
-- records them (ingest/retrieval/truncation.py). What embedding_truncation reads.
select
    embedder,
    text_hash,
    n_tokens,
    max_tokens
from {{ ref('stg_text_tokens') }}
