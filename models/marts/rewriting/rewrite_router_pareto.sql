{{ config(tags=['rewriting']) }}
-- The cost / accuracy trade-off on var rewriting_primary_metric, per cell: every way to spend (or not)
-- the helper's LLM calls, and which of them are Pareto-optimal.
--   always-baseline  the baseline alone (no call)            helper NULL, tau NULL
--   helper-alone     the helper strategy alone               every (query, seed) pays its calls
--   always-merge     baseline ∪ helper by max score          every (query, seed) pays
--   router           rewrite_router_sweep at each tau        only expanded (query, seed) pairs pay
-- value = 3-seed mean; cost per (query, seed): calls_per_query and tokens_per_query (prompt + completion).
-- cost_axis = 'tokens' when no call of the cell lacks token counts, else 'calls'; on_front = no other
-- point of the cell costs no more on that axis and scores at least as much, one of them strictly.
with q as (
    select * from {{ ref('int_rewrite_router_queries') }} where metric = '{{ setting("rewriting_primary_metric") }}'
),

fixed as (
    select corpus, embedder, reranker, helper, seed,
        {{ stable_avg('baseline_value') }} as baseline_value, {{ stable_avg('helper_value') }} as helper_value,
        {{ stable_avg('merge_value') }} as merge_value,
        sum(n_calls) as calls, sum(prompt_tokens + completion_tokens) as tokens,
        sum(n_calls_without_tokens) as untokened, count(*) as n
    from q
    group by all
),

fixed_means as (
    select corpus, embedder, reranker, helper,
        {{ stable_avg('baseline_value') }} as baseline_value, {{ stable_avg('helper_value') }} as helper_value,
        {{ stable_avg('merge_value') }} as merge_value,
        sum(calls) / sum(n) as calls_per_query, sum(tokens) / sum(n) as tokens_per_query,
        sum(untokened) as n_calls_without_tokens
    from fixed
    group by all
),

points as (
    select distinct corpus, embedder, reranker, 'always-baseline' as setting, null::varchar as helper,
        null::double as tau, baseline_value as value, 0.0 as calls_per_query, 0.0 as tokens_per_query,
        0::bigint as n_calls_without_tokens
    from fixed_means
    qualify row_number() over (partition by corpus, embedder, reranker order by helper) = 1
    union all
    select corpus, embedder, reranker, 'helper-alone', helper, null, helper_value, calls_per_query,
        tokens_per_query, n_calls_without_tokens
    from fixed_means
    union all
    select corpus, embedder, reranker, 'always-merge', helper, null, merge_value, calls_per_query,
        tokens_per_query, n_calls_without_tokens
    from fixed_means
    union all
    select corpus, embedder, reranker, 'router', helper, tau, router_value, calls_per_query, tokens_per_query,
        n_calls_without_tokens
    from {{ ref('rewrite_router_sweep') }}
    where metric = '{{ setting("rewriting_primary_metric") }}'
),

axes as (
    select corpus, embedder, reranker,
        case when sum(n_calls_without_tokens) = 0 then 'tokens' else 'calls' end as cost_axis
    from points
    group by all
),

costed as (
    select p.*, a.cost_axis,
        case when a.cost_axis = 'tokens' then p.tokens_per_query else p.calls_per_query end as cost
    from points as p
    inner join axes as a on a.corpus = p.corpus and a.embedder = p.embedder and a.reranker = p.reranker
),

dominated as (
    select distinct p.corpus, p.embedder, p.reranker, p.setting, p.helper, p.tau
    from costed as p
    inner join costed as o
        on o.corpus = p.corpus and o.embedder = p.embedder and o.reranker = p.reranker
        and o.cost <= p.cost and o.value >= p.value and (o.cost < p.cost or o.value > p.value)
)

select
    c.corpus::varchar as corpus,
    c.embedder::varchar as embedder,
    c.reranker::varchar as reranker,
    c.setting::varchar as setting,
    c.helper::varchar as helper,
    c.tau::double as tau,
    '{{ setting("rewriting_primary_metric") }}'::varchar as metric,
    c.value::double as value,
    c.calls_per_query::double as calls_per_query,
    c.tokens_per_query::double as tokens_per_query,
    c.cost_axis::varchar as cost_axis,
    c.cost::double as cost,
    (d.setting is null)::boolean as on_front
from costed as c
left join dominated as d
    on d.corpus = c.corpus and d.embedder = c.embedder and d.reranker = c.reranker and d.setting = c.setting
    and d.helper is not distinct from c.helper and d.tau is not distinct from c.tau
