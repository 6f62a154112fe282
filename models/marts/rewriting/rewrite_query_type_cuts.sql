{{ config(tags=['rewriting']) }}
-- Exploratory cuts by question type (queries.query_type as the loaders store it: HotpotQA bridge /
-- comparison, EnterpriseRAG-Bench's question_type, AmbigNQ ambiguous / single): which strategy helps which
-- kind of question. One row per cell x query type x strategy (solo and controls) x metric; every
-- statistic is the study's own, restricted to the queries of the type (no family correction: labelled
-- exploratory, family = 'exploratory'):
--   mean_value        mean over seeds of the seed's mean over the type's scored queries
--   delta, ci, p      vs the baseline: the paired deltas of rewrite_baseline_deltas (per query, the mean
--                     over its seeds) of the type's queries, paired bootstrap over those queries
--   rescue_rate       (HIT@10 rows only) of the type's queries the baseline misses at var
--                     rewriting_rescue_seed (n_baseline_misses), the share the strategy hits, mean over seeds
--   router_*          (helpers: solo strategies but the baseline) the router with this helper at the
--                     paper's fixed tau (rule paper of int_rewrite_router_tau_fits, var router_paper_tau:
--                     the same for every type and dataset), over the type's complete groups: share expanded,
--                     router mean, its gain over the baseline with the paired bootstrap over queries
with types as (
    select query_id, query_type from {{ ref('int_eval_queries') }}
),

metrics as (
    select m.*, t.query_type
    from {{ ref('int_rewrite_query_metrics') }} as m
    inner join types as t on t.query_id = m.query_id
),

means as (
    select corpus, embedder, reranker, query_type, strategy, kind, metric,
        {{ stable_avg('seed_mean') }} as mean_value, count(*) as n_seeds, max(n) as n_queries_per_seed
    from (
        select corpus, embedder, reranker, query_type, strategy, kind, metric, seed,
            {{ stable_avg('value') }} as seed_mean, count(*) as n
        from metrics
        group by all
    )
    group by all
),

deltas as (
    select d.corpus, d.embedder, d.reranker, t.query_type, d.strategy, d.metric,
        {{ rewriting_bootstrap("list(d.delta order by d.query_id)") }} as b
    from {{ ref('rewrite_baseline_deltas') }} as d
    inner join types as t on t.query_id = d.query_id
    group by all
),

rescue_set as (
    select corpus, embedder, reranker, query_type, query_id
    from metrics
    where metric = 'HIT@10' and strategy = '{{ setting("rewriting_baseline") }}'
        and seed = {{ setting('rewriting_rescue_seed') }} and value = 0
),

rescue as (
    select corpus, embedder, reranker, query_type, strategy, {{ stable_avg('rate') }} as rescue_rate,
        count(*) as n_rescue_seeds
    from (
        select m.corpus, m.embedder, m.reranker, m.query_type, m.strategy, m.seed, {{ stable_avg('m.value') }} as rate
        from metrics as m
        inner join rescue_set as r
            on r.corpus = m.corpus and r.embedder = m.embedder and r.reranker = m.reranker and r.query_id = m.query_id
        where m.metric = 'HIT@10'
        group by all
    )
    group by all
),

rescue_size as (
    select corpus, embedder, reranker, query_type, count(*) as n_baseline_misses
    from rescue_set
    group by all
),

router as (
    select r.corpus, r.embedder, r.reranker, t.query_type, r.helper, r.metric, r.seed, r.query_id, f.tau,
        coalesce(r.top1_score < f.tau, false) as expanded,
        case when r.top1_score < f.tau then r.merge_value else r.baseline_value end as router_value,
        r.baseline_value
    from {{ ref('int_rewrite_router_queries') }} as r
    inner join {{ ref('int_rewrite_router_tau_fits') }} as f
        on f.corpus = r.corpus and f.embedder = r.embedder and f.reranker = r.reranker and f.rule = 'paper'
    inner join types as t on t.query_id = r.query_id
),

router_means as (
    select corpus, embedder, reranker, query_type, helper, metric, any_value(tau) as tau,
        {{ stable_avg('e') }} as pct_expanded, {{ stable_avg('v') }} as router_value,
        {{ stable_avg('b') }} as baseline_value
    from (
        select corpus, embedder, reranker, query_type, helper, metric, seed, any_value(tau) as tau,
            {{ stable_avg('case when expanded then 1.0 else 0.0 end') }} as e,
            {{ stable_avg('router_value') }} as v, {{ stable_avg('baseline_value') }} as b
        from router
        group by all
    )
    group by all
),

router_boot as (
    select corpus, embedder, reranker, query_type, helper, metric,
        {{ rewriting_bootstrap("list(d order by query_id)") }} as b
    from (
        select corpus, embedder, reranker, query_type, helper, metric, query_id,
            {{ stable_avg('router_value - baseline_value') }} as d
        from router
        group by all
    )
    group by all
)

select
    m.corpus::varchar as corpus,
    m.embedder::varchar as embedder,
    m.reranker::varchar as reranker,
    m.query_type::varchar as query_type,
    m.strategy::varchar as strategy,
    m.kind::varchar as kind,
    m.metric::varchar as metric,
    'exploratory'::varchar as family,
    m.n_seeds::integer as n_seeds,
    m.n_queries_per_seed::bigint as n_queries_per_seed,
    m.mean_value::double as mean_value,
    coalesce(d.b.n, 0)::bigint as n_paired,
    d.b.estimate::double as delta,
    d.b.ci_low::double as ci_low,
    d.b.ci_high::double as ci_high,
    d.b.p_value::double as p_value,
    (case when m.metric = 'HIT@10' then coalesce(z.n_baseline_misses, 0) end)::bigint as n_baseline_misses,
    (case when m.metric = 'HIT@10' then x.rescue_rate end)::double as rescue_rate,
    rm.tau::double as router_tau,
    rm.pct_expanded::double as router_pct_expanded,
    rm.router_value::double as router_value,
    rm.baseline_value::double as router_baseline_value,
    rb.b.n::bigint as router_n_queries,
    rb.b.estimate::double as router_gain,
    rb.b.ci_low::double as router_gain_ci_low,
    rb.b.ci_high::double as router_gain_ci_high,
    rb.b.p_value::double as router_gain_p
from means as m
left join deltas as d
    on d.corpus = m.corpus and d.embedder = m.embedder and d.reranker = m.reranker and d.query_type = m.query_type
    and d.strategy = m.strategy and d.metric = m.metric
left join rescue_size as z
    on z.corpus = m.corpus and z.embedder = m.embedder and z.reranker = m.reranker and z.query_type = m.query_type
left join rescue as x
    on x.corpus = m.corpus and x.embedder = m.embedder and x.reranker = m.reranker and x.query_type = m.query_type
    and x.strategy = m.strategy
left join router_means as rm
    on rm.corpus = m.corpus and rm.embedder = m.embedder and rm.reranker = m.reranker and rm.query_type = m.query_type
    and rm.helper = m.strategy and rm.metric = m.metric
left join router_boot as rb
    on rb.corpus = m.corpus and rb.embedder = m.embedder and rb.reranker = m.reranker and rb.query_type = m.query_type
    and rb.helper = m.strategy and rb.metric = m.metric
