select * from {{ source('warehouse', 'runs') }}
