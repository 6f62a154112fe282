-- Fails when a merged list is not a ranking of at most 20 documents: ranks 1..n without gaps, scores
-- non-increasing with rank.
{{ config(tags=['rewriting']) }}
with ranked as (
    select
        *,
        lag(score) over (partition by corpus, embedder, reranker, strategy, seed, query_id order by rank) as previous,
        row_number() over (partition by corpus, embedder, reranker, strategy, seed, query_id order by rank) as position
    from {{ ref('stg_rewrite_runs') }}
)

select *
from ranked
where rank <> position or rank > 20 or score > previous
