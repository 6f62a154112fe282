select * from {{ source('warehouse', 'queries') }}
