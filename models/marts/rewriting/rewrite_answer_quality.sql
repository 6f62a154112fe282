{{ config(tags=['rewriting']) }}
-- Answer quality of the reader per setting, as paired contrasts over queries, per cell x
-- helper x tau x metric (EM, F1) x split. Keys: every (helper, tau) the reader answered as 'router',
-- and every helper it answered as 'always-merge' (tau NULL: that key has only the always-merge - S1
-- contrast). Arms: setting 'S1' (the baseline's list), 'always-merge' (same helper), 'router' (same
-- helper and tau). A contrast pairs the (query, seed) answers both arms have.
--   split        all | triggered | untriggered: the router's expansion (baseline top-1 score < tau) of
--                the (query, seed); router keys only for the last two (a pair without a baseline
--                ranking to gate on is in 'all' only)
--   paper_tau    the key's tau is the paper's fixed tau (var router_paper_tau, 0.65): the paper's
--                answer-quality table (router vs S1, triggered / untriggered)
--   midpoint_tau the key's tau is the per-dataset in-sample midpoint (rule same_dataset of
--                int_rewrite_router_tau_fits; the project's addition)
--   mean_*       3-seed means over the paired answers; delta = mean over queries of the query's mean
--                over its paired seeds of (treatment - control); ci / p: paired bootstrap over queries (the
--                study's B and seed)
with s as (
    select * from {{ ref('rewrite_answer_scores') }} where status = 'scored'
),

gate as (
    -- the router's gate needs only the baseline's top-1 score (not qrels: answers are judged by gold answers)
    select corpus, embedder, reranker, seed, query_id, top1_score
    from {{ ref('int_rewrite_rankings') }}
    where strategy = '{{ setting("rewriting_baseline") }}' and not isnan(top1_score)
),

keys as (
    select distinct corpus, embedder, reranker, helper, tau from s where setting = 'router'
    union
    select distinct corpus, embedder, reranker, helper, null::double from s where setting = 'always-merge'
),

contrasts as (
    -- the alias t names the columns (AL05 would drop it)
    select * from (values
        ('always-merge - S1', 'always-merge', 'S1'),
        ('router - S1', 'router', 'S1'),
        ('router - always-merge', 'router', 'always-merge')
    ) as t (contrast, treatment, control)  -- noqa: AL05
),

arms as (
    select k.corpus, k.embedder, k.reranker, k.helper, k.tau, s.setting, s.seed, s.query_id, s.em, s.f1
    from keys as k
    inner join s
        on s.corpus = k.corpus and s.embedder = k.embedder and s.reranker = k.reranker
        and (s.setting = 'S1'
             or (s.setting = 'always-merge' and s.helper = k.helper)
             or (s.setting = 'router' and s.helper = k.helper and s.tau = k.tau))
),

paired as (
    select c.contrast, c.treatment, c.control, t.corpus, t.embedder, t.reranker, t.helper, t.tau, t.seed, t.query_id,
        t.em as t_em, b.em as c_em, t.f1 as t_f1, b.f1 as c_f1,
        g.top1_score < t.tau as triggered
    from contrasts as c
    inner join arms as t on t.setting = c.treatment
    inner join arms as b
        on b.setting = c.control and b.corpus = t.corpus and b.embedder = t.embedder and b.reranker = t.reranker
        and b.helper = t.helper and b.tau is not distinct from t.tau and b.seed = t.seed and b.query_id = t.query_id
    left join gate as g
        on g.corpus = t.corpus and g.embedder = t.embedder and g.reranker = t.reranker
        and g.seed = t.seed and g.query_id = t.query_id
),

long as (
    select contrast, treatment, control, corpus, embedder, reranker, helper, tau, seed, query_id, triggered,
        'EM' as metric, t_em as t_value, c_em as c_value
    from paired
    union all
    select contrast, treatment, control, corpus, embedder, reranker, helper, tau, seed, query_id, triggered,
        'F1', t_f1, c_f1
    from paired
),

split as (
    select *, 'all' as split from long
    union all
    select *, case when triggered then 'triggered' else 'untriggered' end
    from long
    where tau is not null and triggered is not null
),

seed_means as (
    select corpus, embedder, reranker, helper, tau, contrast, treatment, control, metric, split, seed,
        {{ stable_avg('t_value') }} as t_mean, {{ stable_avg('c_value') }} as c_mean
    from split
    group by all
),

means as (
    select corpus, embedder, reranker, helper, tau, contrast, treatment, control, metric, split,
        count(*) as n_seeds, {{ stable_avg('t_mean') }} as mean_treatment, {{ stable_avg('c_mean') }} as mean_control
    from seed_means
    group by all
),

boot as (
    select corpus, embedder, reranker, helper, tau, contrast, metric, split,
        {{ rewriting_bootstrap("list(d order by query_id)") }} as b
    from (
        select corpus, embedder, reranker, helper, tau, contrast, metric, split, query_id,
            {{ stable_avg('t_value - c_value') }} as d
        from split
        group by all
    )
    group by all
)

select
    m.corpus::varchar as corpus,
    m.embedder::varchar as embedder,
    m.reranker::varchar as reranker,
    m.helper::varchar as helper,
    m.tau::double as tau,
    m.metric::varchar as metric,
    m.split::varchar as split,
    m.contrast::varchar as contrast,
    m.treatment::varchar as treatment,
    m.control::varchar as control,
    m.n_seeds::integer as n_seeds,
    b.b.n::bigint as n_queries,
    m.mean_treatment::double as mean_treatment,
    m.mean_control::double as mean_control,
    b.b.estimate::double as delta,
    b.b.ci_low::double as ci_low,
    b.b.ci_high::double as ci_high,
    b.b.p_value::double as p_value,
    coalesce(m.tau = {{ setting('router_paper_tau') }}::double, false)::boolean as paper_tau,
    coalesce(m.tau = f.tau, false)::boolean as midpoint_tau
from means as m
inner join boot as b
    on b.corpus = m.corpus and b.embedder = m.embedder and b.reranker = m.reranker and b.helper = m.helper
    and b.tau is not distinct from m.tau and b.contrast = m.contrast and b.metric = m.metric and b.split = m.split
left join {{ ref('int_rewrite_router_tau_fits') }} as f
    on f.corpus = m.corpus and f.embedder = m.embedder and f.reranker = m.reranker and f.rule = 'same_dataset'
