{{ config(tags=['evaluation']) }}
-- One row per (corpus, embedder, reranker, condition, query, metric): the per-query scores every
-- contrast and summary is built from (int_contrast_deltas and the marts read this table; the mart
-- query_metrics is its user-facing copy). Kernels: udfs/metrics/* (registered by udfs/register.py).
-- Span corpora:  cov-nDCG@10, R@50, MRR, nDCG@10 (binary), TBC@512/1024/2048 (content + prefix tokens).
-- Document corpora (qrels): HIT@10, R@10, nDCG@10, MRR@10 over the run's documents, each at the rank
-- of its best chunk (with one chunk per document, as in DOC, the run itself).
-- A ranking with a NaN score is not scored (evaluation_exclusions, reason nan_score).
with span_rankings as (
    select
        corpus, embedder, reranker, condition, query_id,
        list(case when same_doc then char_start else 0 end order by rank) as r_start,
        list(case when same_doc then char_end else 0 end order by rank) as r_end,
        list(content_tokens + prefix_tokens order by rank) as r_tokens,
        list(is_relevant order by rank) as r_rel
    from {{ ref('int_relevance') }}
    where corpus_kind = 'span'
    group by corpus, embedder, reranker, condition, query_id
    -- reading chunk_doc_id makes relevance's unknown-chunk check (error() naming the run row) fire
    -- for span corpora too; it is never NULL otherwise
    having not bool_or(isnan(score)) and bool_and(chunk_doc_id is not null)
),

spans as (
    select query_id,
        list(char_start order by span_idx) as s_start,
        list(char_end order by span_idx) as s_end
    from {{ ref('stg_evidence') }}
    group by query_id
),

pools as (
    -- the ideal (greedy) DCG depends on the condition's chunks of the document, not on the run:
    -- computed once per (condition, query) over the chunks that overlap the evidence (the others
    -- gain nothing and are never picked)
    select condition, query_id,
        list(char_start order by char_start, chunk_id) filter (where overlaps_evidence) as p_start,
        list(char_end order by char_start, chunk_id) filter (where overlaps_evidence) as p_end,
        count(*) filter (where is_relevant) as n_relevant
    from {{ ref('int_relevance_pool') }}
    group by condition, query_id
),

ideals as (
    select p.condition, p.query_id, p.n_relevant,
        cov_idcg(coalesce(p.p_start, []::bigint[]), coalesce(p.p_end, []::bigint[]), s.s_start, s.s_end, 10) as idcg
    from pools as p
    inner join spans as s on s.query_id = p.query_id
),

span_scores as (
    select
        r.corpus, r.embedder, r.reranker, r.condition, r.query_id,
        -- cov-nDCG@10 = min(1, DCG/IDCG), 0 when IDCG = 0 (udfs/metrics/cov_ndcg.py::cov_ndcg)
        case when i.idcg > 0
            then least(1.0, cov_dcg(r.r_start, r.r_end, s.s_start, s.s_end, 10) / i.idcg)
            else 0.0
        end as "cov-nDCG@10",
        span_recall(r.r_start, r.r_end, s.s_start, s.s_end, 50) as "R@50",
        binary_mrr(r.r_rel) as "MRR",
        binary_ndcg(r.r_rel, i.n_relevant, 10) as "nDCG@10",
        token_budget_coverage(r.r_start, r.r_end, r.r_tokens, s.s_start, s.s_end, 512) as "TBC@512",
        token_budget_coverage(r.r_start, r.r_end, r.r_tokens, s.s_start, s.s_end, 1024) as "TBC@1024",
        token_budget_coverage(r.r_start, r.r_end, r.r_tokens, s.s_start, s.s_end, 2048) as "TBC@2048"
    from span_rankings as r
    inner join spans as s on s.query_id = r.query_id
    inner join ideals as i on i.condition = r.condition and i.query_id = r.query_id
),

doc_ranked as (
    select corpus, embedder, reranker, condition, query_id, chunk_doc_id,
        min(rank) as best_rank, max(gain) as gain, bool_or(isnan(score)) as has_nan
    from {{ ref('int_relevance') }}
    where corpus_kind = 'document'
    group by corpus, embedder, reranker, condition, query_id, chunk_doc_id
),

doc_rankings as (
    select corpus, embedder, reranker, condition, query_id,
        list(gain::double order by best_rank) as run_rel
    from doc_ranked
    group by corpus, embedder, reranker, condition, query_id
    having not bool_or(has_nan)
),

judged as (
    select query_id, qrels_rel
    from {{ ref('int_judged_qrels') }}
),

doc_scores as (
    select
        r.corpus, r.embedder, r.reranker, r.condition, r.query_id,
        doc_hit(r.run_rel, 10) as "HIT@10",
        doc_recall(r.run_rel, j.qrels_rel, 10) as "R@10",
        doc_ndcg(r.run_rel, j.qrels_rel, 10) as "nDCG@10",
        doc_mrr(r.run_rel, 10) as "MRR@10"
    from doc_rankings as r
    inner join judged as j on j.query_id = r.query_id
),

long as (
    select corpus, embedder, reranker, condition, query_id, metric, value
    from span_scores
    unpivot (value for metric in ("cov-nDCG@10", "R@50", "MRR", "nDCG@10", "TBC@512", "TBC@1024", "TBC@2048"))
    union all
    select corpus, embedder, reranker, condition, query_id, metric, value
    from doc_scores
    unpivot (value for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))
)

select
    l.corpus::varchar as corpus,
    l.embedder::varchar as embedder,
    l.reranker::varchar as reranker,
    l.condition::varchar as condition,
    l.query_id::varchar as query_id,
    q.doc_id::varchar as doc_id,
    q.query_type::varchar as query_type,
    q.topic_bucket::varchar as topic_bucket,
    l.metric::varchar as metric,
    l.value::double as value
from long as l
inner join {{ ref('int_eval_queries') }} as q on q.query_id = l.query_id
