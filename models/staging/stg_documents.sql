select * from {{ source('warehouse', 'documents') }}
