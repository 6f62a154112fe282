{{ config(tags=['rewriting']) }}
-- Budget-matched baselines: does more retrieval budget for the baseline explain what the ensembles
-- gain? Per cell x scope x control x metric, for every control strategy of the seed (kind 'control':
-- S1-pool100, a 5x rerank pool; S1-ann4, four HNSW graphs unioned), the paper's "share of gain
-- captured": the control's gain over the baseline divided by the gain of the reference ensemble (var
-- rewriting_reference_ensemble, S1+S3+S4+HyDE; rule max, the paper's score merge), both on the SAME
-- (query, seed) pairs: complete groups (every solo strategy scored) where the control is scored too.
-- Scopes as rewrite_ensembles: 'pooled' (every seed, seed NULL) and 'seed' (var rewriting_ensemble_seed).
--   *_value         = mean over seeds of the seed's mean over those pairs (baseline, control, reference)
--   gain_control    = mean over queries of the query's mean over seeds of (control - baseline); ci / p
--                     by the paired bootstrap over queries (the study's B and seed)
--   gain_reference  = the same for (reference - baseline), with its CI
--   share_captured  = gain_control / gain_reference, only when gain_reference > 0 (the project's
--                     scope-consistent share: both gains on the same queries and seeds)
--   share_paper     = the paper's formula (its 40% = 5.08 / 12.48): the pooled (3-seed) gain_control /
--                     (the seed-scope reference ensemble's value - the pooled 3-seed baseline value), the
--                     same on both scope rows; NULL when that denominator (paper_reference_gain) is <= 0 or absent
-- status: ok | not_run (no scored ranking of the control in the cell: the control runs come from
-- another stage) | no_reference (some member of the reference ensemble has no runs in the cell, or no
-- complete group has the control) | no_reference_gain (the reference does not beat the baseline: no
-- share). Every (cell, scope, control, metric) gets a row; reason says why a share is missing.
with controls as (
    select strategy as control from {{ ref('int_rewrite_control_strategies') }}
),

reference as (
    select subset_mask, label from {{ ref('int_rewrite_subsets') }} where reference
),

scopes as (
    select g.*, 0 as scope from {{ ref('int_rewrite_groups') }} as g where g.complete
    union all
    select g.*, 1 from {{ ref('int_rewrite_groups') }} as g
    where g.complete and g.seed = {{ setting('rewriting_ensemble_seed') }}
),

cells as (
    select distinct q.corpus, q.embedder, q.reranker, q.metric, s.scope
    from {{ ref('int_rewrite_query_metrics') }} as q
    cross join (
        select 0 as scope
        union all
        select 1
    ) as s
    where q.strategy = '{{ setting("rewriting_baseline") }}'
),

ran as (
    select distinct corpus, embedder, reranker, strategy as control
    from {{ ref('int_rewrite_query_metrics') }}
    where kind = 'control'
),

reference_values as (
    -- the reference ensemble's metrics per complete group (absent when the cell lacks one of its members)
    select group_id, metric, value
    from (
        select e.group_id, e.hit as "HIT@10", e.recall as "R@10", e.ndcg as "nDCG@10", e.mrr as "MRR@10"
        from {{ ref('int_rewrite_ensemble_scores') }} as e
        inner join reference as r on r.subset_mask = e.subset_mask
        where e.rule::varchar = 'max'
    ) unpivot (value for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))
),

pairs as (
    -- one row per (scope, cell, control, seed, query, metric) on which the share is computed
    select s.scope, s.corpus, s.embedder, s.reranker, c.strategy as control, s.seed, s.query_id, c.metric,
        c.value as control_value, b.value as baseline_value, rv.value as reference_value
    from scopes as s
    inner join {{ ref('int_rewrite_query_metrics') }} as c
        on c.kind = 'control' and c.corpus = s.corpus and c.embedder = s.embedder and c.reranker = s.reranker
        and c.seed = s.seed and c.query_id = s.query_id
    inner join {{ ref('int_rewrite_query_metrics') }} as b
        on b.strategy = '{{ setting("rewriting_baseline") }}' and b.corpus = s.corpus and b.embedder = s.embedder
        and b.reranker = s.reranker and b.seed = s.seed and b.query_id = s.query_id and b.metric = c.metric
    left join reference_values as rv on rv.group_id = s.group_id and rv.metric = c.metric
),

means as (
    select scope, corpus, embedder, reranker, control, metric, count(*) as n_seeds,
        {{ stable_avg('b') }} as baseline_value, {{ stable_avg('c') }} as control_value,
        {{ stable_avg('r') }} as reference_value
    from (
        select scope, corpus, embedder, reranker, control, metric, seed, {{ stable_avg('baseline_value') }} as b,
            {{ stable_avg('control_value') }} as c, {{ stable_avg('reference_value') }} as r
        from pairs
        group by all
    )
    group by all
),

per_query as (
    select scope, corpus, embedder, reranker, control, metric, query_id,
        {{ stable_avg('control_value - baseline_value') }} as d_control,
        {{ stable_avg('reference_value - baseline_value') }} as d_reference
    from pairs
    group by all
),

control_boot as (
    select scope, corpus, embedder, reranker, control, metric,
        {{ rewriting_bootstrap("list(d_control order by query_id)") }} as b
    from per_query
    group by all
),

reference_boot as (
    select scope, corpus, embedder, reranker, control, metric,
        {{ rewriting_bootstrap("list(d_reference order by query_id)") }} as b
    from per_query
    where d_reference is not null
    group by all
),

joined as (
    select c.scope, c.corpus, c.embedder, c.reranker, k.control, c.metric,
        m.n_seeds, m.baseline_value, m.control_value, m.reference_value, cb.b as cb, rb.b as rb,
        ran.control is not null as control_ran
    from cells as c
    cross join controls as k
    left join ran
        on ran.corpus = c.corpus and ran.embedder = c.embedder and ran.reranker = c.reranker and ran.control = k.control
    left join means as m
        on m.scope = c.scope and m.corpus = c.corpus and m.embedder = c.embedder and m.reranker = c.reranker
        and m.control = k.control and m.metric = c.metric
    left join control_boot as cb
        on cb.scope = c.scope and cb.corpus = c.corpus and cb.embedder = c.embedder and cb.reranker = c.reranker
        and cb.control = k.control and cb.metric = c.metric
    left join reference_boot as rb
        on rb.scope = c.scope and rb.corpus = c.corpus and rb.embedder = c.embedder and rb.reranker = c.reranker
        and rb.control = k.control and rb.metric = c.metric
),

labelled as (
    select j.*, r.label as reference_subset,
        case
            when not j.control_ran then 'not_run'
            when j.rb is null then 'no_reference'
            when j.rb.estimate <= 0 then 'no_reference_gain'
            else 'ok'
        end as status
    from joined as j
    left join reference as r on true
),

final as (
select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    (case when scope = 1 then 'seed' else 'pooled' end)::varchar as scope,
    (case when scope = 1 then {{ setting('rewriting_ensemble_seed') }} end)::integer as seed,
    control::varchar as control,
    metric::varchar as metric,
    status::varchar as status,
    (case status
        when 'not_run' then 'rewrite_runs has no scored ranking of strategy ' || control
            || ' in this cell: the budget-control runs (' || control || ') have not been produced yet'
        when 'no_reference' then 'no reference ensemble '
            || coalesce(reference_subset, '(var rewriting_reference_ensemble)')
            || ' on these queries: a member has no runs in this cell, or no complete (query, '
            || (case when scope = 1 then 'seed ' || {{ setting('rewriting_ensemble_seed') }} else 'seed' end)
            || ') group has a scored ' || control || ' ranking'
        when 'no_reference_gain' then 'the reference ensemble ' || reference_subset || ' does not beat '
            || '{{ setting("rewriting_baseline") }}' || ' on these queries (gain ' || round(rb.estimate, 4)
            || ' <= 0): there is no gain to share'
    end)::varchar as reason,
    n_seeds::integer as n_seeds,
    cb.n::bigint as n_queries,
    baseline_value::double as baseline_value,
    control_value::double as control_value,
    reference_subset::varchar as reference_subset,
    reference_value::double as reference_value,
    cb.estimate::double as gain_control,
    cb.ci_low::double as ci_low,
    cb.ci_high::double as ci_high,
    cb.p_value::double as p_value,
    rb.estimate::double as gain_reference,
    rb.ci_low::double as gain_reference_ci_low,
    rb.ci_high::double as gain_reference_ci_high,
    (case when status = 'ok' then cb.estimate / rb.estimate end)::double as share_captured
from labelled
)

select * exclude (pooled_gain_control),
    (case when paper_reference_gain > 0 then pooled_gain_control / paper_reference_gain end)::double as share_paper
from (
    select * exclude (pooled_baseline, seed_reference),
        (seed_reference - pooled_baseline)::double as paper_reference_gain
    from (
        select *,
            max(gain_control) filter (where scope = 'pooled') over w as pooled_gain_control,
            max(baseline_value) filter (where scope = 'pooled') over w as pooled_baseline,
            max(reference_value) filter (where scope = 'seed') over w as seed_reference
        from final
        window w as (partition by corpus, embedder, reranker, control, metric)
    ) as windowed
) as with_reference_gain
