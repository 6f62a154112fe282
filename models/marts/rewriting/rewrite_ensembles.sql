{{ config(tags=['rewriting']) }}
-- The ensembles: every subset of the solo strategies (inside the cell's strategies) fused by each rule
-- (int_rewrite_ensemble_scores; udfs/fusion/: max = the score-based union of the members' top-20 lists
-- with each document's max score, the paper's merge; rrf with k = var rewriting_rrf_k, combsum and
-- combmnz over min-max normalized scores; fused list cut at 10), against the best solo strategy, in two
-- scopes over the complete groups:
--   scope 'pooled' (seed NULL)  every seed: 3-seed means, queries paired with their mean over seeds
--   scope 'seed'   (seed = var rewriting_ensemble_seed, 42)  that seed alone: the paper's post-hoc tables
-- Means of metric values over millions of small groups use exact_avg (macros/exact_avg.sql: order-free,
-- within ~2.2e-16); the means of those means stay ordered avgs.
-- Per scope:
--   mean_value = mean over seeds of the seed's mean over queries; sd_seeds its sample sd over seeds
--   best_solo  = the solo strategy with the highest mean of the metric over the same groups (ties:
--                lower bit, the baseline first): on the ensemble seed alone in scope 'seed'
--   delta      = mean over queries of the query's mean over seeds of (ensemble - best solo); ci / p from
--                the paired bootstrap over queries (udfs/stats/bootstrap.py::paired_bootstrap, the study's B and seed)
--   family     = 'predeclared' for rule max x a subset of var rewriting_predeclared_subsets (the paper's
--                ensembles); 'single' for a one-member subset (a solo strategy's list re-fused: no ensemble);
--                else 'exploratory'
--   p_holm     = Holm within the family of one cell x scope x metric (family_size = its number of tests);
--                NULL for 'single' rows, which enter no family
--   is_best    = the scope's best real ensemble (>= 2 members) by var rewriting_primary_metric over all
--                rules (ties: fewer members, rule name, mask); every metric row of it is flagged
with cells as (
    select distinct cell_key, corpus, embedder, reranker from {{ ref('int_rewrite_groups') }}
),

scopes as (
    -- scope 0: every complete group; scope 1: those of the ensemble seed again (for the solo strategies;
    -- the ensembles' rows are not repeated: scope 1 reads the seed's rows of scope 0)
    select g.*, 0 as scope from {{ ref('int_rewrite_groups') }} as g where g.complete
    union all
    select g.*, 1 from {{ ref('int_rewrite_groups') }} as g
    where g.complete and g.seed = {{ setting('rewriting_ensemble_seed') }}
),

scored as (
    -- integer keys (cell_key, query_key) for the aggregations over every group x rule x subset
    select g.cell_key, g.query_key, g.seed, e.rule, e.subset_mask, e.hit, e.recall, e.ndcg, e.mrr
    from {{ ref('int_rewrite_ensemble_scores') }} as e
    inner join {{ ref('int_rewrite_groups') }} as g on g.group_id = e.group_id
),

seed_wide as (
    select cell_key, rule, subset_mask, seed,
        {{ exact_avg('hit') }} as "HIT@10", {{ exact_avg('recall') }} as "R@10", {{ exact_avg('ndcg') }} as "nDCG@10",
        {{ exact_avg('mrr') }} as "MRR@10"
    from scored
    group by all
),

seed_long as (
    select * from seed_wide unpivot (seed_mean for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))
),

seed_means as (
    -- scope 1's one seed mean is scope 0's row of that seed
    select 0 as scope, * from seed_long
    union all
    select 1, * from seed_long where seed = {{ setting('rewriting_ensemble_seed') }}
),

solo as (
    select g.cell_key, g.scope, g.query_key, m.strategy, s.bit, m.metric, m.seed, m.value
    from {{ ref('int_rewrite_query_metrics') }} as m
    inner join {{ ref('int_rewrite_solo_strategies') }} as s on s.strategy = m.strategy
    inner join scopes as g
        on g.corpus = m.corpus and g.embedder = m.embedder and g.reranker = m.reranker
        and g.seed = m.seed and g.query_id = m.query_id
),

best_solo as (
    select cell_key, scope, metric, strategy, {{ stable_avg('seed_mean') }} as mean_value
    from (select cell_key, scope, strategy, bit, metric, seed, {{ stable_avg('value') }} as seed_mean
          from solo group by all)
    group by cell_key, scope, metric, strategy, bit
    qualify row_number() over (
        partition by cell_key, scope, metric order by {{ stable_avg('seed_mean') }} desc, bit
    ) = 1
),

best_seed as (
    -- per group the best solo strategy's value, one column per metric (each metric's best may differ)
    select s.cell_key, s.scope, s.query_key, s.seed,
        {%- for m in ["HIT@10", "R@10", "nDCG@10", "MRR@10"] %}
        any_value(s.value) filter (where s.metric = '{{ m }}') as "{{ m }}"{{ "," if not loop.last }}
        {%- endfor %}
    from solo as s
    inner join best_solo as b
        on b.cell_key = s.cell_key and b.scope = s.scope and b.metric = s.metric and b.strategy = s.strategy
    group by all
),

query_deltas as (
    -- the study's pairing rule: per (query, seed) ensemble - best solo, then the mean over seeds (scope 0);
    -- scope 1 has one seed per query: the difference itself
    select e.cell_key, 0 as scope, e.query_key, e.rule, e.subset_mask,
        {{ exact_avg('e.hit - b."HIT@10"') }} as d1, {{ exact_avg('e.recall - b."R@10"') }} as d2,
        {{ exact_avg('e.ndcg - b."nDCG@10"') }} as d3, {{ exact_avg('e.mrr - b."MRR@10"') }} as d4
    from scored as e
    inner join best_seed as b
        on b.cell_key = e.cell_key and b.scope = 0 and b.query_key = e.query_key and b.seed = e.seed
    group by all
    union all
    select e.cell_key, 1, e.query_key, e.rule, e.subset_mask,
        e.hit - b."HIT@10", e.recall - b."R@10", e.ndcg - b."nDCG@10", e.mrr - b."MRR@10"
    from scored as e
    inner join best_seed as b
        on b.cell_key = e.cell_key and b.scope = 1 and b.query_key = e.query_key and b.seed = e.seed
    where e.seed = {{ setting('rewriting_ensemble_seed') }}
),

deltas as (
    -- one list per (scope, rule, subset) (query_key order = query_id order within a cell), the four
    -- metrics in one struct so the list is sorted once
    select cell_key, scope, rule, subset_mask, list({ 'm1': d1, 'm2': d2, 'm3': d3, 'm4': d4 } order by query_key) as d
    from query_deltas
    group by all
),

boot_wide as (
    select cell_key, scope, rule, subset_mask,
        {%- for m in ["HIT@10", "R@10", "nDCG@10", "MRR@10"] %}
        {{ rewriting_bootstrap("list_transform(d, lambda x: x.m" ~ loop.index ~ ")") }}
            as "{{ m }}"{{ "," if not loop.last }}
        {%- endfor %}
    from deltas
),

boot as (
    select b.*, case when ss.n_members = 1 then 'single'
                     when b.rule::varchar = 'max' and ss.predeclared then 'predeclared' else 'exploratory' end as family
    from (select * from boot_wide unpivot (b for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))) as b
    inner join {{ ref('int_rewrite_subsets') }} as ss on ss.subset_mask = b.subset_mask
),

holm as (
    -- a one-member 'subset' is no ensemble: it enters no Holm family
    {{ holm_by_family("(select * from boot where family <> 'single')", ['cell_key', 'scope', 'metric', 'family'],
                      ['rule', 'subset_mask'], p_value='b.p_value') }}
),

summary as (
    select cell_key, scope, rule, subset_mask, metric,
        {{ stable_avg('seed_mean') }} as mean_value, {{ stable_stddev_samp('seed_mean') }} as sd_seeds,
        count(*) as n_seeds
    from seed_means
    group by all
),

best_ensemble as (
    select su.cell_key, su.scope, su.rule, su.subset_mask
    from summary as su
    inner join {{ ref('int_rewrite_subsets') }} as ss on ss.subset_mask = su.subset_mask
    where su.metric = '{{ setting("rewriting_primary_metric") }}' and ss.n_members >= 2
    qualify row_number() over (partition by su.cell_key, su.scope
                               order by su.mean_value desc, ss.n_members, su.rule, su.subset_mask) = 1
)

select
    c.corpus::varchar as corpus,
    c.embedder::varchar as embedder,
    c.reranker::varchar as reranker,
    (case when su.scope = 1 then 'seed' else 'pooled' end)::varchar as scope,
    (case when su.scope = 1 then {{ setting('rewriting_ensemble_seed') }} end)::integer as seed,
    su.rule::varchar as rule,
    su.subset_mask::integer as subset_mask,
    ss.label::varchar as subset,
    ss.n_members::integer as n_members,
    su.metric::varchar as metric,
    bo.family::varchar as family,
    su.n_seeds::integer as n_seeds,
    bo.b.n::bigint as n_queries,
    su.mean_value::double as mean_value,
    su.sd_seeds::double as sd_seeds,
    bs.strategy::varchar as best_solo,
    bs.mean_value::double as best_solo_value,
    bo.b.estimate::double as delta,
    bo.b.ci_low::double as ci_low,
    bo.b.ci_high::double as ci_high,
    bo.b.p_value::double as p_value,
    h.p_holm::double as p_holm,
    h.family_size::bigint as family_size,
    (be.rule is not null)::boolean as is_best
from summary as su
inner join cells as c on c.cell_key = su.cell_key
inner join {{ ref('int_rewrite_subsets') }} as ss on ss.subset_mask = su.subset_mask
inner join best_solo as bs on bs.cell_key = su.cell_key and bs.scope = su.scope and bs.metric = su.metric
inner join boot as bo
    on bo.cell_key = su.cell_key and bo.scope = su.scope and bo.rule = su.rule and bo.subset_mask = su.subset_mask
    and bo.metric = su.metric
left join holm as h
    on h.cell_key = su.cell_key and h.scope = su.scope and h.rule = su.rule and h.subset_mask = su.subset_mask
    and h.metric = su.metric
left join best_ensemble as be
    on be.cell_key = su.cell_key and be.scope = su.scope and be.rule = su.rule and be.subset_mask = su.subset_mask
