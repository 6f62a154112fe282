select * from {{ source('warehouse', 'evidence') }}
