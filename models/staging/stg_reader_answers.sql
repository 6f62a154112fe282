select * from {{ source('warehouse', 'reader_answers') }}
