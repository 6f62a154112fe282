{{ config(tags=['evaluation']) }}
-- Minimum detectable effect per contrast and cell from the bootstrap spread (udfs/stats/effects.py::mde):
-- MDE = (z_{0.975} + z_{0.80}) * se_boot = 2.8016 * se_boot, two-sided alpha = .05, power = .80,
-- in metric units. |mean_delta| < mde: the study could not have reliably detected an effect that size.
select
    contrast::varchar as contrast,
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    control_embedder::varchar as control_embedder,
    reranker::varchar as reranker,
    metric::varchar as metric,
    n_queries::bigint as n_queries,
    n_docs::bigint as n_docs,
    mean_delta::double as mean_delta,
    se_boot::double as se_boot,
    mde(se_boot)::double as mde,
    is_primary::boolean as is_primary
from {{ ref('int_contrast_bootstrap') }}
