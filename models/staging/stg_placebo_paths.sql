select * from {{ source('warehouse', 'placebo_paths') }}
