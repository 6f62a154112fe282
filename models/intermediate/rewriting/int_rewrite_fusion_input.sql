{{ config(materialized='view', tags=['rewriting']) }}
-- The solo strategies' ranked documents of every complete group, as the ensemble kernels read them
-- (udfs/ensembles.py): group_id, doc_id, the strategy's bit, rank, score, binary relevance.
select
    g.group_id,
    r.doc_id,
    s.bit,
    r.rank,
    r.score,
    coalesce(q.relevance, 0) >= 1 as relevant
from {{ ref('stg_rewrite_runs') }} as r
inner join {{ ref('int_rewrite_solo_strategies') }} as s on s.strategy = r.strategy
inner join {{ ref('int_rewrite_groups') }} as g
    on g.corpus = r.corpus and g.embedder = r.embedder and g.reranker = r.reranker
    and g.seed = r.seed and g.query_id = r.query_id and g.complete
left join {{ ref('stg_qrels') }} as q on q.query_id = r.query_id and q.doc_id = r.doc_id
