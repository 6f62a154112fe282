{{ config(materialized='view', tags=['rewriting']) }}
-- Every document's flat text (title, blank line, body). What rewrite_reader_inputs gives the reader as a
-- passage (a view: the texts are joined when the reader reads, never copied).
select
    doc_id,
    text
from {{ ref('stg_documents') }}
