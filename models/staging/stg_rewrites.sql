select * from {{ source('warehouse', 'rewrites') }}
