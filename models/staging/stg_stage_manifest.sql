select * from {{ source('warehouse', 'stage_manifest') }}
