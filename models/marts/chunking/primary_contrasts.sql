{{ config(tags=['evaluation']) }}
-- The pre-registered primary cell: the bootstrap result of `contrasts` beside the MixedLM check
-- (score ~ condition, random intercept per document; int_contrast_mixedlm) and the MDE.
select
    c.contrast::varchar as contrast,
    c.corpus::varchar as corpus,
    c.embedder::varchar as embedder,
    c.reranker::varchar as reranker,
    c.metric::varchar as metric,
    c.n_queries::bigint as n_queries,
    c.n_docs::bigint as n_docs,
    c.mean_delta::double as mean_delta,
    c.ci_low::double as ci_low,
    c.ci_high::double as ci_high,
    c.p_value::double as p_value,
    c.p_holm::double as p_holm,
    c.dz::double as dz,
    d.mde::double as mde,
    m.coef::double as mixed_coef,
    m.se::double as mixed_se,
    m.ci_low::double as mixed_ci_low,
    m.ci_high::double as mixed_ci_high,
    m.p_value::double as mixed_p_value,
    m.converged::boolean as mixed_converged,
    c.n_boot::bigint as n_boot,
    c.n_far_side::bigint as n_far_side
from {{ ref('contrasts') }} as c
inner join {{ ref('contrast_mde') }} as d
    on d.contrast = c.contrast and d.corpus = c.corpus and d.embedder = c.embedder
    and d.control_embedder = c.control_embedder and d.reranker = c.reranker and d.metric = c.metric
left join {{ ref('int_contrast_mixedlm') }} as m
    on m.contrast = c.contrast and m.corpus = c.corpus and m.embedder = c.embedder
    and m.reranker = c.reranker and m.metric = c.metric
where c.is_primary
