{{ config(tags=['rewriting']) }}
-- Every non-empty subset of the solo strategies (2^n - 1; 63 for six) as a bitmask over
-- int_rewrite_solo_strategies.bit, with its members in bit order and a label such as 'S1+Q2D'.
with strategies as (
    select strategy, bit from {{ ref('int_rewrite_solo_strategies') }}
),

masks as (
    select range as subset_mask
    from range(1, (1::bigint << (select count(*) from strategies)))
)

select
    m.subset_mask::integer as subset_mask,
    list(s.strategy order by s.bit) as members,
    string_agg(s.strategy, '+' order by s.bit)::varchar as label,
    count(*)::integer as n_members
from masks as m
inner join strategies as s on (m.subset_mask >> s.bit) & 1 = 1
group by m.subset_mask
