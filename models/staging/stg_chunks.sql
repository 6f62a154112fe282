select * from {{ source('warehouse', 'chunks') }}
