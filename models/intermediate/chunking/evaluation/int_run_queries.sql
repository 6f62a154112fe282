{{ config(tags=['evaluation']) }}
-- Every query a run ranks, once: how many chunks the run ranked for it and whether any of their scores is
-- NaN. evaluation_exclusions reads has_nan (reason nan_score), shallow_runs reads n_ranked (the depth of an
-- imported run's list); both used to aggregate the run rows themselves.
with runs as (
    select corpus, embedder, reranker, condition, query_id, score
    from {{ ref('stg_runs') }}
)

select
    corpus,
    embedder,
    reranker,
    condition,
    query_id,
    count(*) as n_ranked,
    bool_or(isnan(score)) as has_nan
from runs
group by corpus, embedder, reranker, condition, query_id
