select * from {{ source('warehouse', 'funnel') }}
