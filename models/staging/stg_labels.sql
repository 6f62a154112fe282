select * from {{ source('warehouse', 'labels') }}
