select * from {{ source('warehouse', 'chunkset_docs') }}
