{{ config(tags=['rewriting']) }}
-- Exploratory: the rewriting study's comparisons with the baseline (setting rewriting_baseline, S1) sliced by
-- every label (int_query_labels), in the seed scope of the paper's tables (setting rewriting_ensemble_seed, 42):
--   solo      each strategy and control (rewrite_query_metrics) - the baseline, per query at that seed
--   ensemble  each pre-declared ensemble (rule max x setting rewriting_predeclared_subsets; contrast = its
--             subset label, e.g. 'S1+Q2D') - the baseline, per query of the seed's complete groups
--   router    'router:<helper>': the router with the cross-fitted tau (int_rewrite_router_tau_fits, rule
--             cross_fit: no query sets its own threshold) - the baseline, per query at that seed
-- Per (contrast, cell, metric, label, value): mean paired delta, the study's paired bootstrap over queries
-- (udfs/stats/bootstrap.py::paired_bootstrap, settings rewriting_bootstrap_b / rewriting_bootstrap_seed), Holm within
-- (contrast, cell, metric, label), the minimum-size flag (setting slice_min_queries), and the heterogeneity test
-- with queries as the resampling units (udfs/stats/heterogeneity.py); macros/slices.sql, docs/slicing.md.
with metrics_long as (
    select corpus, embedder, reranker, strategy, seed, query_id, metric, value
    from {{ ref('int_rewrite_query_metrics') }}
    where seed = {{ setting('rewriting_ensemble_seed') }}
),

ensembles as (
    select g.corpus, g.embedder, g.reranker, ss.label as contrast, g.query_id,
        e.hit as "HIT@10", e.recall as "R@10", e.ndcg as "nDCG@10", e.mrr as "MRR@10"
    from {{ ref('int_rewrite_ensemble_scores') }} as e
    inner join {{ ref('int_rewrite_groups') }} as g on g.group_id = e.group_id
    inner join {{ ref('int_rewrite_subsets') }} as ss on ss.subset_mask = e.subset_mask
    where e.rule::varchar = 'max' and ss.predeclared and g.seed = {{ setting('rewriting_ensemble_seed') }}
),

arms as (
    select t.corpus, t.embedder, t.reranker, t.strategy as contrast, 'solo' as kind, t.query_id, t.metric,
        t.value - b.value as delta
    from metrics_long as t
    inner join metrics_long as b
        on b.strategy = '{{ setting("rewriting_baseline") }}' and b.corpus = t.corpus and b.embedder = t.embedder
        and b.reranker = t.reranker and b.query_id = t.query_id and b.metric = t.metric
    where t.strategy <> '{{ setting("rewriting_baseline") }}'
    union all
    select e.corpus, e.embedder, e.reranker, e.contrast, 'ensemble', e.query_id, e.metric, e.value - b.value
    from (select * from ensembles unpivot (value for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))) as e
    inner join metrics_long as b
        on b.strategy = '{{ setting("rewriting_baseline") }}' and b.corpus = e.corpus and b.embedder = e.embedder
        and b.reranker = e.reranker and b.query_id = e.query_id and b.metric = e.metric
    union all
    select r.corpus, r.embedder, r.reranker, 'router:' || r.helper, 'router', r.query_id, r.metric,
        (case when coalesce(r.top1_score < c.tau, false) then r.merge_value else r.baseline_value end)
        - r.baseline_value
    from {{ ref('int_rewrite_router_queries') }} as r
    inner join {{ ref('int_rewrite_router_tau_fits') }} as c
        on c.corpus = r.corpus and c.embedder = r.embedder and c.reranker = r.reranker and c.rule = 'cross_fit'
        and c.fold = r.fold
    where r.seed = {{ setting('rewriting_ensemble_seed') }}
),

cell as (
    select contrast, kind, corpus, embedder, reranker, metric, count(*) as n_queries,
        {{ stable_avg('delta') }} as mean_delta
    from arms
    group by all
),

labelled as (
    select a.contrast, a.kind, a.corpus, a.embedder, a.reranker, a.metric, l.label, l.value, l.origin, a.query_id,
        l.doc_id, a.query_id as unit, a.delta
    from arms as a
    inner join {{ ref('int_query_labels') }} as l on l.query_id = a.query_id
),

sliced as (
    {{ slice_contrasts('labelled', ['contrast', 'kind', 'corpus', 'embedder', 'reranker', 'metric'], 'paired',
                       setting('rewriting_bootstrap_b'), setting('rewriting_bootstrap_seed'), min_docs=false) }}
)

select
    s.contrast::varchar as contrast,
    s.kind::varchar as kind,
    s.corpus::varchar as corpus,
    s.embedder::varchar as embedder,
    s.reranker::varchar as reranker,
    s.metric::varchar as metric,
    {{ setting('rewriting_ensemble_seed') }}::integer as seed,
    (s.metric = '{{ setting("rewriting_primary_metric") }}')::boolean as is_primary_metric,
    {{ slice_columns('rewriting_bootstrap_b', 'rewriting_bootstrap_seed') }}
from sliced as s
inner join cell as c
    on c.contrast = s.contrast and c.kind = s.kind and c.corpus = s.corpus and c.embedder = s.embedder
    and c.reranker = s.reranker and c.metric = s.metric
