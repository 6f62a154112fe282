select * from {{ source('warehouse', 'llm_calls') }}
