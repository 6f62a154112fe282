{{ config(materialized='view', tags=['rewriting']) }}
-- The budget controls of seeds/rewrite_strategies.csv (kind control: S1-pool100, S1-ann4): the baseline
-- given the budget of an ensemble without an LLM. What rewrite_budget_baselines compares with.
select
    strategy::varchar as strategy
from {{ ref('rewrite_strategies') }}
where kind = 'control'
