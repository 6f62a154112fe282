{{ config(tags=['rewriting']) }}
-- Per-query paired deltas against the baseline (var rewriting_baseline), and the pairing rule of
-- every bootstrap in the study: a strategy and the baseline are paired per (query, seed) where both have a scored
-- ranking; the query's paired delta is the mean over those seeds of (strategy - baseline), n_seeds of them. The
-- bootstrap then resamples queries (each query one unit, whatever its number of seeds). With every
-- seed present this is the difference of the two seed means; a delta of identical rankings is exactly 0.
select
    t.corpus::varchar as corpus,
    t.embedder::varchar as embedder,
    t.reranker::varchar as reranker,
    t.strategy::varchar as strategy,
    t.kind::varchar as kind,
    t.query_id::varchar as query_id,
    t.metric::varchar as metric,
    {{ stable_avg('t.value - b.value') }}::double as delta,
    count(*)::integer as n_seeds
from {{ ref('int_rewrite_query_metrics') }} as t
inner join {{ ref('int_rewrite_query_metrics') }} as b
    on b.strategy = '{{ setting("rewriting_baseline") }}' and b.corpus = t.corpus and b.embedder = t.embedder
    and b.reranker = t.reranker and b.seed = t.seed and b.query_id = t.query_id and b.metric = t.metric
where t.strategy <> '{{ setting("rewriting_baseline") }}'
group by t.corpus, t.embedder, t.reranker, t.strategy, t.kind, t.query_id, t.metric
