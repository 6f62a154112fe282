select * from {{ source('warehouse', 'corpus_meta') }}
