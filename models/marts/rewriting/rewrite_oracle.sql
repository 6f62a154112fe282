{{ config(tags=['rewriting']) }}
-- The oracle union: for every subset of the solo strategies (inside the cell's strategies), HIT@10 of
-- "some member hits" (a perfect router among the members), against the best solo member. Over the
-- complete groups (int_rewrite_groups), in the two scopes of rewrite_ensembles: 'pooled' (every seed,
-- seed NULL) and 'seed' (var rewriting_ensemble_seed alone, 42: the paper's post-hoc oracle table):
--   oracle_hit  = mean over seeds of the share of queries where max_{s in subset} HIT@10_s = 1
--   best_member = the member with the highest mean HIT@10 over the same groups of the scope (ties: lower
--                 bit, the baseline first); best_member_hit its mean
--   delta       = mean over queries of the query's mean over seeds of (oracle - best member), with the
--                 paired bootstrap over queries (udfs/stats/bootstrap.py::paired_bootstrap, B and seed the
--                 study's vars)
-- The means over a group's 0/1 values (and their -1/0/1 differences) use exact_avg: their sum is an integer,
-- so it is the same double as avg(x order by x) (one rounding, in the division), without a per-group sort.
with scopes as (
    -- scope 0: every complete group; scope 1: those of the ensemble seed again
    select g.*, 0 as scope from {{ ref('int_rewrite_groups') }} as g where g.complete
    union all
    select g.*, 1 from {{ ref('int_rewrite_groups') }} as g
    where g.complete and g.seed = {{ setting('rewriting_ensemble_seed') }}
),

hits as (
    select g.scope, m.corpus, m.embedder, m.reranker, m.seed, m.query_id, s.bit, m.value as hit, g.cell_mask
    from {{ ref('int_rewrite_query_metrics') }} as m
    inner join {{ ref('int_rewrite_solo_strategies') }} as s on s.strategy = m.strategy
    inner join scopes as g
        on g.corpus = m.corpus and g.embedder = m.embedder and g.reranker = m.reranker
        and g.seed = m.seed and g.query_id = m.query_id
    where m.metric = 'HIT@10'
),

group_hits as (
    select scope, corpus, embedder, reranker, seed, query_id, any_value(cell_mask) as cell_mask,
        bit_or(case when hit = 1 then 1 << bit else 0 end) as hit_mask
    from hits
    group by all
),

member_means as (
    select scope, corpus, embedder, reranker, bit, {{ stable_avg('seed_mean') }} as mean_hit
    from (select scope, corpus, embedder, reranker, bit, seed, {{ stable_avg('hit') }} as seed_mean
          from hits group by all)
    group by all
),

subsets as (
    select distinct c.scope, c.corpus, c.embedder, c.reranker, s.subset_mask, s.label, s.n_members, s.predeclared
    from group_hits as c
    inner join {{ ref('int_rewrite_subsets') }} as s on s.subset_mask & ~c.cell_mask = 0
),

best as (
    select s.scope, s.corpus, s.embedder, s.reranker, s.subset_mask, m.bit as best_bit
    from subsets as s
    inner join member_means as m
        on m.scope = s.scope and m.corpus = s.corpus and m.embedder = s.embedder and m.reranker = s.reranker
        and (s.subset_mask >> m.bit) & 1 = 1
    qualify row_number() over (
        partition by s.scope, s.corpus, s.embedder, s.reranker, s.subset_mask order by m.mean_hit desc, m.bit) = 1
),

per_group as (
    select s.scope, s.corpus, s.embedder, s.reranker, s.subset_mask, g.seed, g.query_id,
        case when g.hit_mask & s.subset_mask <> 0 then 1.0 else 0.0 end as oracle,
        case when (g.hit_mask >> b.best_bit) & 1 = 1 then 1.0 else 0.0 end as best_member
    from subsets as s
    inner join best as b
        on b.scope = s.scope and b.corpus = s.corpus and b.embedder = s.embedder and b.reranker = s.reranker
        and b.subset_mask = s.subset_mask
    inner join group_hits as g
        on g.scope = s.scope and g.corpus = s.corpus and g.embedder = s.embedder and g.reranker = s.reranker
),

seed_means as (
    select scope, corpus, embedder, reranker, subset_mask, seed,
        {{ exact_avg('oracle') }} as oracle, {{ exact_avg('best_member') }} as best_member
    from per_group
    group by all
),

query_deltas as (
    select scope, corpus, embedder, reranker, subset_mask, query_id, {{ exact_avg('oracle - best_member') }} as delta
    from per_group
    group by all
),

boot as (
    select scope, corpus, embedder, reranker, subset_mask,
        {{ rewriting_bootstrap("list(delta order by query_id)") }} as b
    from query_deltas
    group by all
),

means as (
    select scope, corpus, embedder, reranker, subset_mask, count(*) as n_seeds,
        {{ stable_avg('oracle') }} as oracle_hit, {{ stable_avg('best_member') }} as best_member_hit
    from seed_means
    group by all
)

select
    s.corpus::varchar as corpus,
    s.embedder::varchar as embedder,
    s.reranker::varchar as reranker,
    (case when s.scope = 1 then 'seed' else 'pooled' end)::varchar as scope,
    (case when s.scope = 1 then {{ setting('rewriting_ensemble_seed') }} end)::integer as seed,
    s.subset_mask::integer as subset_mask,
    s.label::varchar as subset,
    s.n_members::integer as n_members,
    s.predeclared::boolean as predeclared,
    m.n_seeds::integer as n_seeds,
    bo.b.n::bigint as n_queries,
    m.oracle_hit::double as oracle_hit,
    st.strategy::varchar as best_member,
    m.best_member_hit::double as best_member_hit,
    bo.b.estimate::double as delta,
    bo.b.ci_low::double as ci_low,
    bo.b.ci_high::double as ci_high,
    bo.b.p_value::double as p_value
from subsets as s
inner join best as b
    on b.scope = s.scope and b.corpus = s.corpus and b.embedder = s.embedder and b.reranker = s.reranker
    and b.subset_mask = s.subset_mask
inner join {{ ref('int_rewrite_solo_strategies') }} as st on st.bit = b.best_bit
inner join means as m
    on m.scope = s.scope and m.corpus = s.corpus and m.embedder = s.embedder and m.reranker = s.reranker
    and m.subset_mask = s.subset_mask
inner join boot as bo
    on bo.scope = s.scope and bo.corpus = s.corpus and bo.embedder = s.embedder and bo.reranker = s.reranker
    and bo.subset_mask = s.subset_mask
