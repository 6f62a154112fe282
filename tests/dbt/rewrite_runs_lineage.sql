-- Fails (returns rows) when a merged rewrite_runs row cannot be traced to its text: the
-- (query, strategy, seed, variant_idx) that gave the document its score must be a kept rewrites row,
-- and that text's MMR list must hold the document with exactly that score (lineage; S1-ann4
-- searches its text in four HNSW graphs: the best of its lists must hold it at that score).
{{ config(tags=['rewriting']) }}
select r.*, w.kept, t.score as mmr_score
from {{ ref('stg_rewrite_runs') }} as r
left join {{ ref('stg_rewrites') }} as w
    on w.corpus = r.corpus and w.embedder = r.embedder and w.query_id = r.query_id
    and w.strategy = r.strategy and w.seed = r.seed and w.variant_idx = r.variant_idx
left join (
    select corpus, embedder, reranker, strategy, seed, query_id, variant_idx, doc_id, max(score) as score
    from {{ ref('stg_rewrite_text_runs') }}
    where stage = 'mmr'
    group by all
) as t
    on t.corpus = r.corpus and t.embedder = r.embedder and t.reranker = r.reranker and t.strategy = r.strategy
    and t.seed = r.seed and t.query_id = r.query_id and t.variant_idx = r.variant_idx and t.doc_id = r.doc_id
where w.kept is distinct from true or t.score is distinct from r.score
