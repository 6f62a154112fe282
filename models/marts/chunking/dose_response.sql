{{ config(tags=['evaluation']) }}
-- Exploratory dose-response of cov-nDCG@10 on heading-path depth, per structure family
-- (int_dose_conditions, from the conditions seed: structural, flat, prefix none|path; dose = prefix_depth, so
-- induced: A2=0, A3-d1=1, A3-d2=2, A3=3 and gold: G2, G3-d1, G3-d2, G3).
-- Per query with a score at every dose: OLS slope b_q = Σ (d - d̄)(y_d - ȳ) / Σ (d - d̄)²
-- (metric points per depth level); the estimate is the mean of b_q (= the within-query pooled slope),
-- with the document-clustered bootstrap CI and p (same B and seed as the contrasts).
-- Queries missing a dose are dropped and counted (n_dropped); with none left the statistics are NULL.
with doses as (
    select condition, family, dose
    from {{ ref('int_dose_conditions') }}
),

levels as (
    select family, count(*) as n_levels from doses group by family
),

per_query as (
    select
        m.corpus, m.embedder, m.reranker, d.family, m.query_id,
        coalesce(any_value(m.doc_id), m.query_id) as cluster_id,
        count(*) as n_doses,
        -- slope from dose-ordered lists (list sums run in list order: bit-identical on every rebuild)
        list(d.dose::double order by d.dose) as ds,
        list(m.value order by d.dose) as ys
    from {{ ref('int_query_metrics') }} as m
    inner join doses as d on d.condition = m.condition
    where m.metric = 'cov-nDCG@10'
    group by m.corpus, m.embedder, m.reranker, d.family, m.query_id
),

lists as (
    select
        p.corpus, p.embedder, p.reranker, p.family, l.n_levels,
        count(*) filter (where p.n_doses < l.n_levels) as n_dropped,
        list((p.n_doses * list_inner_product(p.ds, p.ys) - list_sum(p.ds) * list_sum(p.ys))
             / (p.n_doses * list_inner_product(p.ds, p.ds) - list_sum(p.ds) ^ 2)
             order by p.cluster_id, p.query_id) filter (where p.n_doses = l.n_levels) as slopes,
        list(p.cluster_id order by p.cluster_id, p.query_id) filter (where p.n_doses = l.n_levels) as clusters
    from per_query as p
    inner join levels as l on l.family = p.family
    group by p.corpus, p.embedder, p.reranker, p.family, l.n_levels
),

boot as (
    select *, cluster_bootstrap(slopes, clusters, {{ setting('bootstrap_b') }}, {{ setting('bootstrap_seed') }}) as b
    from lists
)

select
    family::varchar as family,
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    'cov-nDCG@10'::varchar as metric,
    n_levels::bigint as n_levels,
    coalesce(b.n, 0)::bigint as n_queries,
    n_dropped::bigint as n_dropped,
    coalesce(b.n_clusters, 0)::bigint as n_docs,
    b.estimate::double as slope,
    b.ci_low::double as ci_low,
    b.ci_high::double as ci_high,
    b.p_value::double as p_value,
    {{ setting('bootstrap_b') }}::bigint as n_boot,
    b.n_far::bigint as n_far_side
from boot
