{{ config(tags=['rewriting']) }}
-- Per-query document metrics of every scored ranking of rewrite_runs (solo strategies and
-- controls), long form: the table every rewriting model reads (the mart rewrite_query_metrics is its
-- user-facing copy). Qrels binary (relevant iff relevance >= 1, gain 1): HIT@10, R@10, nDCG@10,
-- MRR@10 by the doc-level kernels (udfs/metrics/doc_level.py, equal to ranx) over the ranking in
-- rewrite_runs.rank order. Rankings that are not scored are counted in rewrite_exclusions.
-- list_length: the ranking's documents (rewrite_runs rows), so a metric at 10 computed on a shorter
-- list is visible (a text's list is filled to its K documents whenever the corpus has them).
with judged as (
    select query_id, qrels_binary as qrels_rel
    from {{ ref('int_judged_qrels') }}
),

scores as (
    select
        r.corpus, r.embedder, r.reranker, r.strategy, r.kind, r.seed, r.query_id, r.n_docs as list_length,
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
    value::double as value,
    list_length::integer as list_length
from scores
unpivot (value for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))
