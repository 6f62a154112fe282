select * from {{ source('warehouse', 'chunk_prefixes') }}
