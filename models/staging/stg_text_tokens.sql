select * from {{ source('warehouse', 'text_tokens') }}
