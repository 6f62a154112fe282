{{ config(tags=['rewriting']) }}
-- Per-query document metrics of every scored ranking of rewrite_runs (solo strategies and
-- controls), long form. Qrels binary (relevant iff relevance >= 1, gain 1): HIT@10, R@10, nDCG@10,
-- MRR@10 by the doc-level kernels (udfs/metrics/doc_level.py, equal to ranx) over the ranking in
-- rewrite_runs.rank order. Rankings that are not scored are counted in rewrite_exclusions.
with judged as (
    select query_id, list((relevance >= 1)::double order by doc_id) as qrels_rel
    from {{ ref('stg_qrels') }}
    group by query_id
),

scores as (
    select
        r.corpus, r.embedder, r.reranker, r.strategy, r.kind, r.seed, r.query_id,
        doc_hit(r.run_rel, 10) as "HIT@10",
        doc_recall(r.run_rel, j.qrels_rel, 10) as "R@10",
        doc_ndcg(r.run_rel, j.qrels_rel, 10) as "nDCG@10",
        doc_mrr(r.run_rel, 10) as "MRR@10"
    from {{ ref('int_rewrite_rankings') }} as r
    inner join judged as j on j.query_id = r.query_id
    where r.status = 'scored'
)

select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    strategy::varchar as strategy,
    kind::varchar as kind,
    seed::integer as seed,
    query_id::varchar as query_id,
    metric::varchar as metric,
    value::double as value
from scores
unpivot (value for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))
