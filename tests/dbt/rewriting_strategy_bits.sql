{{ config(tags=['rewriting']) }}
-- Fails when the study's subset masks cannot be built: var rewriting_baseline must be a solo strategy
-- of seeds/rewrite_strategies.csv (bit 0: every comparison is against it), and there must be at most
-- 15 solo strategies (masks are 16-bit; 15 strategies = 32,767 subsets).
select 'baseline ' || '{{ var("rewriting_baseline") }}' || ' is not a solo strategy of the seed' as problem
where not exists (
    select 1 from {{ ref('int_rewrite_solo_strategies') }}
    where strategy = '{{ var("rewriting_baseline") }}' and bit = 0
)
union all
select 'more than 15 solo strategies (' || count(*) || ')' from {{ ref('int_rewrite_solo_strategies') }} having count(*) > 15
