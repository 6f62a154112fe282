select * from {{ source('warehouse', 'induction_log') }}
