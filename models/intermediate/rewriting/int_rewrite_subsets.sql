{{ config(tags=['rewriting']) }}
-- Every non-empty subset of the solo strategies (2^n - 1; 63 for six) as a bitmask over
-- int_rewrite_solo_strategies.bit, with its members in bit order and a label such as 'S1+Q2D', and
-- whether it is one of the paper's pre-declared ensembles (var rewriting_predeclared_subsets: Holm over
-- that family in rewrite_ensembles) or the budget table's reference ensemble (var rewriting_reference_ensemble).
-- A listed name that is no solo strategy fails the test rewriting_strategy_bits (never a silent mask).
with strategies as (
    select strategy, bit from {{ ref('int_rewrite_solo_strategies') }}
),

masks as (
    select range as subset_mask
    from range(1, (1::bigint << (select count(*) from strategies)))
),

listed as (
    select l, generate_subscripts(l, 1) as idx
    from (select {{ setting('rewriting_predeclared_subsets') }}::varchar[][] as l)
),

named as (
    select 'predeclared' as list_name, idx, unnest(l[idx]) as strategy from listed
    union all
    select 'reference', 1, unnest({{ setting('rewriting_reference_ensemble') }}::varchar[])
),

named_masks as (
    select n.list_name, n.idx, bit_or(1 << s.bit) as subset_mask
    from named as n
    inner join strategies as s on s.strategy = n.strategy
    group by all
)

select
    m.subset_mask::integer as subset_mask,
    list(s.strategy order by s.bit) as members,
    string_agg(s.strategy, '+' order by s.bit)::varchar as label,
    count(*)::integer as n_members,
    (m.subset_mask in (select subset_mask from named_masks where list_name = 'predeclared'))::boolean as predeclared,
    (m.subset_mask in (select subset_mask from named_masks where list_name = 'reference'))::boolean as reference
from masks as m
inner join strategies as s on (m.subset_mask >> s.bit) & 1 = 1
group by m.subset_mask
