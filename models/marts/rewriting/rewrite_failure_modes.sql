{{ config(tags=['rewriting']) }}
-- How each strategy fails, per cell (every strategy with scored rankings: solo and controls).
--   miss_rate   = mean over seeds of the share of its scored queries with HIT@10 = 0 (catastrophic miss)
--   rescue set  = the queries the baseline misses (HIT@10 = 0) at seed var rewriting_rescue_seed (42,
--                 as in the paper); n_baseline_misses = its size
--   rescue_rate = mean over seeds of the share of the rescue set (among those queries the strategy has
--                 a scored ranking for at that seed) that the strategy hits; NULL when the set is empty
--   n_rankings  = its scored (query, seed) rankings; n_short_10 / n_short_20 = how many of them hold fewer
--                than 10 / 20 documents (list_length; under rewriting.pool_fill: fixed, the paper's fixed chunk
--                pool, long documents that fill several pooled chunks leave a list short)
-- The baseline's rescue rate is 0 at the rescue seed by construction (and at every seed when its runs
-- do not depend on the seed).
with hits as (
    select corpus, embedder, reranker, strategy, kind, seed, query_id, value as hit, list_length
    from {{ ref('int_rewrite_query_metrics') }}
    where metric = 'HIT@10'
),

misses as (
    select corpus, embedder, reranker, strategy, kind, seed,
        {{ stable_avg('case when hit = 0 then 1.0 else 0.0 end') }} as miss_rate, count(*) as n
    from hits
    group by all
),

rescue_set as (
    select corpus, embedder, reranker, query_id
    from hits
    where strategy = '{{ setting("rewriting_baseline") }}' and seed = {{ setting('rewriting_rescue_seed') }} and hit = 0
),

rescue_size as (
    select corpus, embedder, reranker, count(*) as n_baseline_misses
    from rescue_set
    group by all
),

rescued as (
    select h.corpus, h.embedder, h.reranker, h.strategy, h.seed, {{ stable_avg('h.hit') }} as rescue_rate, count(*) as n
    from hits as h
    inner join rescue_set as r
        on r.corpus = h.corpus and r.embedder = h.embedder and r.reranker = h.reranker and r.query_id = h.query_id
    group by all
),

per_strategy as (
    select m.corpus, m.embedder, m.reranker, m.strategy, any_value(m.kind) as kind,
        count(*) as n_seeds, max(m.n) as n_queries_per_seed,
        {{ stable_avg('m.miss_rate') }} as miss_rate, {{ stable_stddev_samp('m.miss_rate') }} as miss_rate_sd_seeds,
        {{ stable_avg('r.rescue_rate') }} as rescue_rate, count(r.seed) as n_rescue_seeds
    from misses as m
    left join rescued as r
        on r.corpus = m.corpus and r.embedder = m.embedder and r.reranker = m.reranker
        and r.strategy = m.strategy and r.seed = m.seed
    group by m.corpus, m.embedder, m.reranker, m.strategy
),

lengths as (
    select corpus, embedder, reranker, strategy, count(*) as n_rankings,
        count(*) filter (where list_length < 10) as n_short_10, count(*) filter (where list_length < 20) as n_short_20
    from hits
    group by all
)

select
    p.corpus::varchar as corpus,
    p.embedder::varchar as embedder,
    p.reranker::varchar as reranker,
    p.strategy::varchar as strategy,
    p.kind::varchar as kind,
    p.n_seeds::integer as n_seeds,
    p.n_queries_per_seed::bigint as n_queries_per_seed,
    p.miss_rate::double as miss_rate,
    p.miss_rate_sd_seeds::double as miss_rate_sd_seeds,
    {{ setting('rewriting_rescue_seed') }}::integer as rescue_seed,
    coalesce(z.n_baseline_misses, 0)::bigint as n_baseline_misses,
    p.rescue_rate::double as rescue_rate,
    p.n_rescue_seeds::integer as n_rescue_seeds,
    l.n_rankings::bigint as n_rankings,
    l.n_short_10::bigint as n_short_10,
    l.n_short_20::bigint as n_short_20
from per_strategy as p
left join rescue_size as z on z.corpus = p.corpus and z.embedder = p.embedder and z.reranker = p.reranker
inner join lengths as l
    on l.corpus = p.corpus and l.embedder = p.embedder and l.reranker = p.reranker and l.strategy = p.strategy
