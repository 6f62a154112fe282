{{ config(tags=['rewriting']) }}
-- The router's tau sweep: per cell x helper x tau (int_rewrite_router_taus) x metric. A query
-- (at a seed) is expanded when the baseline's top-1 score < tau: it then gets the always-merge list
-- (baseline ∪ helper by max score, top 10), otherwise the baseline's list.
--   pct_expanded   = mean over seeds of the share of queries expanded
--   router_value, baseline_value, merge_value = 3-seed means (means over seeds of the seed's query mean)
--   delta_vs_baseline, delta_vs_merge (+ ci, p): mean over queries of the query's mean over seeds of
--                    router - baseline and router - always-merge; paired bootstrap over queries (the study's B, seed;
--                    queries in query_key = query_id order)
--   n_wins / n_ties / n_losses: among expanded (query, seed) pairs, merge_value > / = / < baseline_value
--   llm_calls, prompt_tokens, completion_tokens: summed over the expanded (query, seed) pairs only (an
--                    unexpanded query never calls the helper); *_per_query = that sum / (query, seed) pairs;
--                    n_calls_without_tokens: expanded calls whose backend reported no tokens (not in the sums)
with q as (
    select r.*, t.tau, r.top1_score < t.tau as expanded,
        case when r.top1_score < t.tau then r.merge_value else r.baseline_value end as router_value
    from {{ ref('int_rewrite_router_queries') }} as r
    inner join {{ ref('int_rewrite_router_taus') }} as t
        on t.corpus = r.corpus and t.embedder = r.embedder and t.reranker = r.reranker
),

fixed_seed_means as (
    -- the baseline's and always-merge's seed means do not depend on tau: once per helper, not per tau
    select corpus, embedder, reranker, helper, metric, seed,
        {{ stable_avg('baseline_value') }} as baseline_value, {{ stable_avg('merge_value') }} as merge_value
    from {{ ref('int_rewrite_router_queries') }}
    group by all
),

seed_means as (
    -- the share expanded: a plain avg of 0/1 sums exactly in any order
    select s.*, f.baseline_value, f.merge_value
    from (
        select corpus, embedder, reranker, helper, tau, metric, seed,
            {{ stable_avg('router_value') }} as router_value,
            avg(case when expanded then 1.0 else 0.0 end) as pct_expanded
        from q
        group by all
    ) as s
    inner join fixed_seed_means as f
        on f.corpus = s.corpus and f.embedder = s.embedder and f.reranker = s.reranker
        and f.helper = s.helper and f.metric = s.metric and f.seed = s.seed
),

means as (
    select corpus, embedder, reranker, helper, tau, metric, count(*) as n_seeds,
        {{ stable_avg('router_value') }} as router_value, {{ stable_avg('baseline_value') }} as baseline_value,
        {{ stable_avg('merge_value') }} as merge_value,
        {{ stable_avg('pct_expanded') }} as pct_expanded
    from seed_means
    group by all
),

counts as (
    select corpus, embedder, reranker, helper, tau, metric,
        count(*) as n_query_seeds,
        count(*) filter (where expanded) as n_expanded,
        count(*) filter (where expanded and merge_value > baseline_value) as n_wins,
        count(*) filter (where expanded and merge_value = baseline_value) as n_ties,
        count(*) filter (where expanded and merge_value < baseline_value) as n_losses,
        coalesce(sum(n_calls) filter (where expanded), 0) as llm_calls,
        coalesce(sum(prompt_tokens) filter (where expanded), 0) as prompt_tokens,
        coalesce(sum(completion_tokens) filter (where expanded), 0) as completion_tokens,
        coalesce(sum(n_calls_without_tokens) filter (where expanded), 0) as n_calls_without_tokens
    from q
    group by all
),

per_query as (
    select corpus, embedder, reranker, helper, tau, metric, query_key,
        {{ stable_avg('router_value - baseline_value') }} as d_baseline,
        {{ stable_avg('router_value - merge_value') }} as d_merge
    from q
    group by all
),

boot as (
    select corpus, embedder, reranker, helper, tau, metric,
        {{ rewriting_bootstrap("list(d_baseline order by query_key)") }} as vb,
        {{ rewriting_bootstrap("list(d_merge order by query_key)") }} as vm
    from per_query
    group by all
)

select
    m.corpus::varchar as corpus,
    m.embedder::varchar as embedder,
    m.reranker::varchar as reranker,
    m.helper::varchar as helper,
    m.tau::double as tau,
    m.metric::varchar as metric,
    m.n_seeds::integer as n_seeds,
    b.vb.n::bigint as n_queries,
    c.n_query_seeds::bigint as n_query_seeds,
    c.n_expanded::bigint as n_expanded,
    m.pct_expanded::double as pct_expanded,
    m.router_value::double as router_value,
    m.baseline_value::double as baseline_value,
    m.merge_value::double as merge_value,
    b.vb.estimate::double as delta_vs_baseline,
    b.vb.ci_low::double as delta_vs_baseline_ci_low,
    b.vb.ci_high::double as delta_vs_baseline_ci_high,
    b.vb.p_value::double as delta_vs_baseline_p,
    b.vm.estimate::double as delta_vs_merge,
    b.vm.ci_low::double as delta_vs_merge_ci_low,
    b.vm.ci_high::double as delta_vs_merge_ci_high,
    b.vm.p_value::double as delta_vs_merge_p,
    c.n_wins::bigint as n_wins,
    c.n_ties::bigint as n_ties,
    c.n_losses::bigint as n_losses,
    c.llm_calls::bigint as llm_calls,
    c.prompt_tokens::bigint as prompt_tokens,
    c.completion_tokens::bigint as completion_tokens,
    c.n_calls_without_tokens::bigint as n_calls_without_tokens,
    (c.llm_calls / c.n_query_seeds)::double as calls_per_query,
    ((c.prompt_tokens + c.completion_tokens) / c.n_query_seeds)::double as tokens_per_query
from means as m
inner join counts as c
    on c.corpus = m.corpus and c.embedder = m.embedder and c.reranker = m.reranker
    and c.helper = m.helper and c.tau = m.tau and c.metric = m.metric
inner join boot as b
    on b.corpus = m.corpus and b.embedder = m.embedder and b.reranker = m.reranker
    and b.helper = m.helper and b.tau = m.tau and b.metric = m.metric
