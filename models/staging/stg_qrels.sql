select * from {{ source('warehouse', 'qrels') }}
