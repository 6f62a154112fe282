{{ config(tags=['rewriting']) }}
-- Point 5, the ensembles: every subset of the solo strategies (inside the cell's strategies) fused by
-- each rule (rewrite_ensemble_scores; udfs/fusion/: max = the score-based union of the members' top-20
-- lists with each document's max score, rrf with k = var rewriting_rrf_k, combsum and combmnz over
-- min-max normalized scores; fused list cut at 10), against the best solo strategy. Over the complete groups:
--   mean_value = mean over seeds of the seed's mean over queries; sd_seeds its sample sd over seeds
--   best_solo  = the solo strategy with the highest 3-seed mean of the metric over the same groups
--                (ties: lower bit, the baseline first)
--   delta      = mean over queries of (ensemble - best solo), each a mean over seeds; ci / p from the
--                paired bootstrap over queries (udfs/bootstrap.py::paired_bootstrap, the study's B and seed)
--   p_holm     = Holm over the subsets of one cell x rule x metric (family_size = their number)
--   is_best    = the cell's best real ensemble (>= 2 members) by var rewriting_primary_metric over all
--                rules (ties: fewer members, rule name, mask); every metric row of it is flagged
with scored as (
    select g.corpus, g.embedder, g.reranker, g.seed, g.query_id, e.rule::varchar as rule, e.subset_mask,
        e.hit, e.recall, e.ndcg, e.mrr
    from {{ ref('rewrite_ensemble_scores') }} as e
    inner join {{ ref('rewrite_groups') }} as g on g.group_id = e.group_id
),

seed_wide as (
    select corpus, embedder, reranker, rule, subset_mask, seed,
        avg(hit) as "HIT@10", avg(recall) as "R@10", avg(ndcg) as "nDCG@10", avg(mrr) as "MRR@10"
    from scored
    group by all
),

seed_means as (
    select * from seed_wide unpivot (seed_mean for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))
),

query_wide as (
    select corpus, embedder, reranker, rule, subset_mask, query_id,
        avg(hit) as "HIT@10", avg(recall) as "R@10", avg(ndcg) as "nDCG@10", avg(mrr) as "MRR@10"
    from scored
    group by all
),

query_means as (
    select * from query_wide unpivot (value for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))
),

solo as (
    select m.corpus, m.embedder, m.reranker, m.strategy, s.bit, m.metric, m.seed, m.query_id, m.value
    from {{ ref('rewrite_query_metrics') }} as m
    inner join {{ ref('rewrite_solo_strategies') }} as s on s.strategy = m.strategy
    inner join {{ ref('rewrite_groups') }} as g
        on g.corpus = m.corpus and g.embedder = m.embedder and g.reranker = m.reranker
        and g.seed = m.seed and g.query_id = m.query_id and g.complete
),

best_solo as (
    select corpus, embedder, reranker, metric, strategy, avg(seed_mean) as mean_value
    from (select corpus, embedder, reranker, strategy, bit, metric, seed, avg(value) as seed_mean from solo group by all)
    group by corpus, embedder, reranker, metric, strategy, bit
    qualify row_number() over (partition by corpus, embedder, reranker, metric order by avg(seed_mean) desc, bit) = 1
),

best_query as (
    select s.corpus, s.embedder, s.reranker, s.metric, s.query_id, avg(s.value) as value
    from solo as s
    inner join best_solo as b
        on b.corpus = s.corpus and b.embedder = s.embedder and b.reranker = s.reranker
        and b.metric = s.metric and b.strategy = s.strategy
    group by all
),

boot as (
    select q.corpus, q.embedder, q.reranker, q.rule, q.subset_mask, q.metric,
        paired_bootstrap(list(q.value - b.value order by q.query_id), {{ var('rewriting_bootstrap_b') }},
                         {{ var('rewriting_bootstrap_seed') }}) as b
    from query_means as q
    inner join best_query as b
        on b.corpus = q.corpus and b.embedder = q.embedder and b.reranker = q.reranker
        and b.metric = q.metric and b.query_id = q.query_id
    group by all
),

family as (
    select corpus, embedder, reranker, rule, metric,
        list(subset_mask order by subset_mask) as masks,
        count(*) as family_size,
        holm_adjust(list(b.p_value order by subset_mask)) as adjusted
    from boot
    group by all
),

holm as (
    select corpus, embedder, reranker, rule, metric, family_size, unnest(masks) as subset_mask, unnest(adjusted) as p_holm
    from family
),

summary as (
    select corpus, embedder, reranker, rule, subset_mask, metric,
        avg(seed_mean) as mean_value, stddev_samp(seed_mean) as sd_seeds, count(*) as n_seeds
    from seed_means
    group by all
),

best_ensemble as (
    select su.corpus, su.embedder, su.reranker, su.rule, su.subset_mask
    from summary as su
    inner join {{ ref('rewrite_subsets') }} as ss on ss.subset_mask = su.subset_mask
    where su.metric = '{{ var("rewriting_primary_metric") }}' and ss.n_members >= 2
    qualify row_number() over (partition by su.corpus, su.embedder, su.reranker
                               order by su.mean_value desc, ss.n_members, su.rule, su.subset_mask) = 1
)

select
    su.corpus::varchar as corpus,
    su.embedder::varchar as embedder,
    su.reranker::varchar as reranker,
    su.rule::varchar as rule,
    su.subset_mask::integer as subset_mask,
    ss.label::varchar as subset,
    ss.n_members::integer as n_members,
    su.metric::varchar as metric,
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
inner join {{ ref('rewrite_subsets') }} as ss on ss.subset_mask = su.subset_mask
inner join best_solo as bs
    on bs.corpus = su.corpus and bs.embedder = su.embedder and bs.reranker = su.reranker and bs.metric = su.metric
inner join boot as bo
    on bo.corpus = su.corpus and bo.embedder = su.embedder and bo.reranker = su.reranker
    and bo.rule = su.rule and bo.subset_mask = su.subset_mask and bo.metric = su.metric
inner join holm as h
    on h.corpus = su.corpus and h.embedder = su.embedder and h.reranker = su.reranker
    and h.rule = su.rule and h.subset_mask = su.subset_mask and h.metric = su.metric
left join best_ensemble as be
    on be.corpus = su.corpus and be.embedder = su.embedder and be.reranker = su.reranker
    and be.rule = su.rule and be.subset_mask = su.subset_mask
