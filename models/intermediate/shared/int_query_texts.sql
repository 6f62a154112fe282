{{ config(materialized='view', tags=['rewriting']) }}
-- Every query's text, as the loader stored it. What rewrite_reader_inputs puts in the reader's prompt.
select
    query_id,
    text
from {{ ref('stg_queries') }}
