select * from {{ source('warehouse', 'paragraphs') }}
