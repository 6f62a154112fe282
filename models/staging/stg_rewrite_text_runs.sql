select * from {{ source('warehouse', 'rewrite_text_runs') }}
