select * from {{ source('warehouse', 'routing') }}
