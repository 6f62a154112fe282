{{ config(tags=['rewriting']) }}
-- The solo strategies of seeds/rewrite_strategies.csv with their bit in a subset mask: the baseline
-- (var rewriting_baseline) is bit 0, the others follow in strategy-name order (S1, HyDE, Q2D, S2, S3, S4).
select
    strategy::varchar as strategy,
    (row_number() over (order by strategy <> '{{ setting("rewriting_baseline") }}', strategy) - 1)::integer as bit,
    uses_llm::boolean as uses_llm
from {{ ref('rewrite_strategies') }}
where kind = 'solo'
