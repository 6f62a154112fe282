select * from {{ source('warehouse', 'run_manifest') }}
