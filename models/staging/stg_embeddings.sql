select * from {{ source('warehouse', 'embeddings') }}
