select * from {{ source('warehouse', 'query_answers') }}
