{{ config(tags=['rewriting']) }}
-- The router's tau grid per cell: var router_taus when the cell has a reranker (its scores are
-- sigmoid probabilities), var router_taus_cosine when it has none (the gate is then a cosine).
with cells as (
    select distinct corpus, embedder, reranker from {{ ref('int_rewrite_groups') }} where complete
)

select corpus, embedder, reranker, unnest(
    case when reranker = 'none' then {{ setting('router_taus_cosine') }}::double[]
        else {{ setting('router_taus') }}::double[] end
)::double as tau
from cells
