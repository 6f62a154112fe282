select * from {{ source('warehouse', 'sections') }}
