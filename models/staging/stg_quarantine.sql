select * from {{ source('warehouse', 'quarantine') }}
