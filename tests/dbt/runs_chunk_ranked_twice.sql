-- Fails when a ranking lists the same chunk twice (coverage would still count its characters once,
-- but binary nDCG would double-count a relevant chunk and the token budget would pay twice).
{{ config(tags=['evaluation']) }}
select corpus, embedder, reranker, condition, query_id, chunk_id, count(*) as n_times
from {{ ref('stg_runs') }}
group by corpus, embedder, reranker, condition, query_id, chunk_id
having count(*) > 1
