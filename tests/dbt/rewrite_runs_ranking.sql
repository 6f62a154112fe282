-- Fails when a merged list is not a ranking of at most 20 documents: ranks 1..n without gaps; a list
-- mixed from several texts has scores non-increasing with rank (the max-score order); a strategy's
-- only text keeps its MMR order: the document at rank r is the text's MMR document at rank r.
{{ config(tags=['rewriting']) }}
with texts as (
    select corpus, embedder, reranker, strategy, seed, query_id,
        count(distinct (variant_idx, ann_seed)) as n_texts
    from {{ ref('stg_rewrite_text_runs') }}
    where stage = 'mmr'
    group by all
),

ranked as (
    select
        *,
        lag(score) over (partition by corpus, embedder, reranker, strategy, seed, query_id order by rank) as previous,
        row_number() over (partition by corpus, embedder, reranker, strategy, seed, query_id order by rank) as position
    from {{ ref('stg_rewrite_runs') }}
)

select r.*, t.n_texts, m.doc_id as mmr_doc_id
from ranked as r
left join texts as t using (corpus, embedder, reranker, strategy, seed, query_id)
left join {{ ref('stg_rewrite_text_runs') }} as m
    on t.n_texts = 1 and m.stage = 'mmr' and m.corpus = r.corpus and m.embedder = r.embedder
    and m.reranker = r.reranker and m.strategy = r.strategy and m.seed = r.seed and m.query_id = r.query_id
    and m.rank = r.rank
where r.rank <> r.position or r.rank > 20
    or (coalesce(t.n_texts, 2) > 1 and r.score > r.previous)
    or (t.n_texts = 1 and m.doc_id is distinct from r.doc_id)
