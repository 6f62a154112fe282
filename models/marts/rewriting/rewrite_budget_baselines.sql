{{ config(tags=['rewriting']) }}
-- Point 6, budget-matched baselines: does more retrieval budget for the baseline explain what the
-- ensembles gain? Per cell x metric, for every control strategy of the seed (kind 'control':
-- S1-pool100, a 5x rerank pool; S1-ann4, four seeded ANN indexes unioned), against the baseline and
-- the cell's best ensemble (rewrite_ensembles.is_best):
--   gain_ensemble  = best ensemble mean - baseline mean (3-seed means over the complete groups)
--   gain_control   = mean over paired queries of (control - baseline) (rewrite_baseline_deltas); ci / p by
--                    the paired bootstrap over queries (the study's B and seed)
--   share_captured = gain_control / gain_ensemble
-- The control runs come from another stage: a cell without them gets a row per control and metric
-- with status 'not_run' and the reason, never an empty mart. status: ok | not_run | no_ensemble
-- (no ensemble of two or more solo strategies over complete groups) | no_ensemble_gain
-- (gain_ensemble <= 0: no share to capture).
with controls as (
    select strategy as control from {{ ref('rewrite_strategies') }} where kind = 'control'
),

baseline as (
    select m.corpus, m.embedder, m.reranker, m.metric, avg(m.seed_mean order by m.seed_mean) as mean_value
    from (
        select q.corpus, q.embedder, q.reranker, q.metric, q.seed, avg(q.value order by q.value) as seed_mean
        from {{ ref('rewrite_query_metrics') }} as q
        inner join {{ ref('int_rewrite_groups') }} as g
            on g.corpus = q.corpus and g.embedder = q.embedder and g.reranker = q.reranker
            and g.seed = q.seed and g.query_id = q.query_id and g.complete
        where q.strategy = '{{ var("rewriting_baseline") }}'
        group by all
    ) as m
    group by all
),

cells as (
    select distinct corpus, embedder, reranker, metric
    from {{ ref('rewrite_query_metrics') }}
    where strategy = '{{ var("rewriting_baseline") }}'
),

control_means as (
    select corpus, embedder, reranker, strategy, metric, avg(seed_mean order by seed_mean) as mean_value, count(*) as n_seeds
    from (
        select corpus, embedder, reranker, strategy, metric, seed, avg(value order by value) as seed_mean
        from {{ ref('rewrite_query_metrics') }}
        where kind = 'control'
        group by all
    )
    group by all
),

control_boot as (
    select corpus, embedder, reranker, strategy, metric,
        paired_bootstrap(list(delta order by query_id), {{ var('rewriting_bootstrap_b') }},
                         {{ var('rewriting_bootstrap_seed') }}) as b
    from {{ ref('rewrite_baseline_deltas') }}
    where kind = 'control'
    group by all
),

best as (
    select corpus, embedder, reranker, metric, rule, subset, mean_value
    from {{ ref('rewrite_ensembles') }}
    where is_best
),

joined as (
    select
        c.corpus, c.embedder, c.reranker, k.control, c.metric,
        bl.mean_value as baseline_value,
        cm.mean_value as control_value,
        cm.n_seeds,
        cb.b as b,
        be.rule as ensemble_rule,
        be.subset as ensemble_subset,
        be.mean_value as ensemble_value,
        be.mean_value - bl.mean_value as gain_ensemble
    from cells as c
    cross join controls as k
    left join baseline as bl
        on bl.corpus = c.corpus and bl.embedder = c.embedder and bl.reranker = c.reranker and bl.metric = c.metric
    left join control_means as cm
        on cm.corpus = c.corpus and cm.embedder = c.embedder and cm.reranker = c.reranker
        and cm.strategy = k.control and cm.metric = c.metric
    left join control_boot as cb
        on cb.corpus = c.corpus and cb.embedder = c.embedder and cb.reranker = c.reranker
        and cb.strategy = k.control and cb.metric = c.metric
    left join best as be
        on be.corpus = c.corpus and be.embedder = c.embedder and be.reranker = c.reranker and be.metric = c.metric
)

select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    control::varchar as control,
    metric::varchar as metric,
    (case
        when control_value is null then 'not_run'
        when ensemble_value is null then 'no_ensemble'
        when gain_ensemble <= 0 then 'no_ensemble_gain'
        else 'ok'
    end)::varchar as status,
    (case
        when control_value is null then 'rewrite_runs has no scored ranking of strategy ' || control
            || ' in this cell: the budget-control runs (' || control || ') have not been produced yet'
        when ensemble_value is null then 'no ensemble of two or more solo strategies in this cell (fewer than two '
            || 'solo strategies have scored rankings, or no (query, seed) has all of them)'
        when gain_ensemble <= 0 then 'the best ensemble does not beat the baseline, so there is no gain to share'
    end)::varchar as reason,
    n_seeds::integer as n_seeds,
    b.n::bigint as n_queries,
    baseline_value::double as baseline_value,
    control_value::double as control_value,
    ensemble_rule::varchar as ensemble_rule,
    ensemble_subset::varchar as ensemble_subset,
    ensemble_value::double as ensemble_value,
    gain_ensemble::double as gain_ensemble,
    b.estimate::double as gain_control,
    b.ci_low::double as ci_low,
    b.ci_high::double as ci_high,
    b.p_value::double as p_value,
    (case when control_value is not null and gain_ensemble > 0 then b.estimate / gain_ensemble end)::double
        as share_captured
from joined
