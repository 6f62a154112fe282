{{ config(tags=['rewriting']) }}
-- Fails when the study's subset masks cannot be built: var rewriting_baseline must be a solo strategy
-- of seeds/rewrite_strategies.csv (bit 0: every comparison is against it), and there must be at most
-- 15 solo strategies (masks are 16-bit; 15 strategies = 32,767 subsets); every strategy named by var
-- rewriting_predeclared_subsets or var rewriting_reference_ensemble must be a solo strategy of the seed.
select 'baseline ' || '{{ setting("rewriting_baseline") }}' || ' is not a solo strategy of the seed' as problem
where not exists (
    select 1 from {{ ref('int_rewrite_solo_strategies') }}
    where strategy = '{{ setting("rewriting_baseline") }}' and bit = 0
)
union all
select 'more than 15 solo strategies (' || count(*) || ')' from {{ ref('int_rewrite_solo_strategies') }} having count(*) > 15
union all
select 'var ' || v || ' names ' || strategy || ', which is not a solo strategy of seeds/rewrite_strategies.csv'
from (
    select 'rewriting_predeclared_subsets' as v, unnest(flatten({{ setting('rewriting_predeclared_subsets') }}::varchar[][])) as strategy
    union all
    select 'rewriting_reference_ensemble', unnest({{ setting('rewriting_reference_ensemble') }}::varchar[])
) as named
where strategy not in (select strategy from {{ ref('int_rewrite_solo_strategies') }})
