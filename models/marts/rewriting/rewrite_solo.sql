{{ config(tags=['rewriting']) }}
-- The solo table: per solo strategy and cell x metric, the 3-seed mean and sd and the paired
-- bootstrap against the baseline (var rewriting_baseline).
--   mean_value  = mean over seeds of the seed's mean over its scored queries
--   sd_seeds    = sample sd (ddof 1) of those seed means (NULL with one seed)
--   delta       = mean over the paired queries of d_q, the query's mean over the seeds both have of
--                 (strategy - baseline) (rewrite_baseline_deltas: the pairing rule of the whole study)
--   ci_low/high, p_value: paired bootstrap of mean(d_q) resampling queries (udfs/stats/bootstrap.py::
--                 paired_bootstrap, B = var rewriting_bootstrap_b, seed var rewriting_bootstrap_seed,
--                 queries in query_id order; two-sided p)
--   p_holm      = Holm step-down over the non-baseline solo strategies of the cell x metric
--                 (udfs/stats/multiple.py; family_size = its m). The paper corrects nothing: p_value is its p.
-- The baseline's own row has no delta.
with per_seed as (
    select corpus, embedder, reranker, strategy, metric, seed, {{ stable_avg('value') }} as seed_mean, count(*) as n
    from {{ ref('int_rewrite_query_metrics') }}
    where kind = 'solo'
    group by all
),

summary as (
    select corpus, embedder, reranker, strategy, metric,
        {{ stable_avg('seed_mean') }} as mean_value,
        {{ stable_stddev_samp('seed_mean') }} as sd_seeds,
        count(*) as n_seeds,
        max(n) as n_queries_per_seed
    from per_seed
    group by all
),

pairs as (
    select corpus, embedder, reranker, strategy, metric, list(delta order by query_id) as deltas
    from {{ ref('rewrite_baseline_deltas') }}
    where kind = 'solo'
    group by all
),

boot as (
    select *, {{ rewriting_bootstrap("deltas") }} as b
    from pairs
),

holm as (
    {{ holm_by_family('boot', ['corpus', 'embedder', 'reranker', 'metric'], ['strategy'], p_value='b.p_value') }}
)

select
    s.corpus::varchar as corpus,
    s.embedder::varchar as embedder,
    s.reranker::varchar as reranker,
    s.strategy::varchar as strategy,
    s.metric::varchar as metric,
    s.n_seeds::integer as n_seeds,
    s.n_queries_per_seed::bigint as n_queries_per_seed,
    s.mean_value::double as mean_value,
    s.sd_seeds::double as sd_seeds,
    coalesce(b.b.n, 0)::bigint as n_paired,
    b.b.estimate::double as delta,
    b.b.ci_low::double as ci_low,
    b.b.ci_high::double as ci_high,
    b.b.p_value::double as p_value,
    h.p_holm::double as p_holm,
    h.family_size::bigint as family_size
from summary as s
left join boot as b
    on b.corpus = s.corpus and b.embedder = s.embedder and b.reranker = s.reranker
    and b.strategy = s.strategy and b.metric = s.metric
left join holm as h
    on h.corpus = s.corpus and h.embedder = s.embedder and h.reranker = s.reranker
    and h.strategy = s.strategy and h.metric = s.metric
