{{ config(tags=['rewriting']) }}
-- Complementarity: pairwise Jaccard@10 of the solo strategies' top-10 document sets,
-- J(A, B) = |A ∩ B| / |A ∪ B|, averaged over the (query, seed) pairs where both have a scored ranking
-- (same seed), per cell. Computed once per unordered pair and stored in both orders (a symmetric
-- matrix, bit-identical both ways; the diagonal is 1 and not stored).
with r as (
    select corpus, embedder, reranker, strategy, seed, query_id, top10
    from {{ ref('int_rewrite_rankings') }}
    where status = 'scored' and kind = 'solo'
),

pairs as (
    select
        a.corpus, a.embedder, a.reranker, a.strategy as strategy_a, b.strategy as strategy_b,
        len(list_intersect(a.top10, b.top10)) as n_common,
        len(a.top10) + len(b.top10) as n_both
    from r as a
    inner join r as b
        on b.corpus = a.corpus and b.embedder = a.embedder and b.reranker = a.reranker
        and b.seed = a.seed and b.query_id = a.query_id and b.strategy > a.strategy
),

means as (
    select corpus, embedder, reranker, strategy_a, strategy_b,
        count(*) as n_pairs, {{ stable_avg('n_common / (n_both - n_common)') }} as jaccard
    from pairs
    group by all
)

select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    a::varchar as strategy_a,
    b::varchar as strategy_b,
    n_pairs::bigint as n_pairs,
    jaccard::double as jaccard
from (
    select corpus, embedder, reranker, strategy_a as a, strategy_b as b, n_pairs, jaccard from means
    union all
    select corpus, embedder, reranker, strategy_b, strategy_a, n_pairs, jaccard from means
) as pairs
