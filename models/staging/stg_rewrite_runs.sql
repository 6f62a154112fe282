select * from {{ source('warehouse', 'rewrite_runs') }}
