{{ config(tags=['rewriting']) }}
-- Every (cell, seed, query) with a scored ranking of some solo strategy. cell_mask = the bits of the
-- solo strategies that have a scored ranking anywhere in the cell (a strategy never run there is
-- not an ensemble member there); the group is complete when it has a scored ranking of each of them.
-- Ensembles, the oracle union and the router use complete groups only (the others are counted in
-- rewrite_exclusions). group_id numbers the complete groups 0..G-1 in (cell, seed, query) order:
-- the ensemble kernel's row index; cell_key and query_key number the cells and (cell, query) pairs
-- in sort order (integer keys for the large aggregations downstream).
with solo as (
    select r.corpus, r.embedder, r.reranker, r.seed, r.query_id, r.n_relevant, s.bit
    from {{ ref('int_rewrite_rankings') }} as r
    inner join {{ ref('int_rewrite_solo_strategies') }} as s on s.strategy = r.strategy
    where r.status = 'scored'
),

cells as (
    select corpus, embedder, reranker, bit_or(1 << bit) as cell_mask
    from solo
    group by corpus, embedder, reranker
),

groups as (
    select corpus, embedder, reranker, seed, query_id, any_value(n_relevant) as n_relevant,
        bit_or(1 << bit) as group_mask
    from solo
    group by corpus, embedder, reranker, seed, query_id
),

flagged as (
    select g.*, c.cell_mask, g.group_mask = c.cell_mask as complete
    from groups as g
    inner join cells as c on c.corpus = g.corpus and c.embedder = g.embedder and c.reranker = g.reranker
)

select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    reranker::varchar as reranker,
    seed::integer as seed,
    query_id::varchar as query_id,
    n_relevant::integer as n_relevant,
    group_mask::integer as group_mask,
    cell_mask::integer as cell_mask,
    complete::boolean as complete,
    (dense_rank() over (order by corpus, embedder, reranker) - 1)::integer as cell_key,
    (dense_rank() over (order by corpus, embedder, reranker, query_id) - 1)::integer as query_key,
    (case when complete then row_number() over (
        partition by complete order by corpus, embedder, reranker, seed, query_id) - 1 end)::integer as group_id
from flagged
