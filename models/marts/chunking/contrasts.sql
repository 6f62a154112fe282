{{ config(tags=['evaluation']) }}
-- The contrast families per cell (table `contrasts`): mean paired delta (treatment - control) with its
-- document-clustered bootstrap CI and two-sided p, Holm step-down p across the contrasts of the
-- same family and cell (udfs/stats/multiple.py; family_size = the m it adjusted over: the contrasts whose two arms
-- both have runs in the cell, so a missing arm shows as a smaller family, never silently), Cohen's dz.
-- family: 'preregistered' (C1-C4 of the seed contrast_family) or 'declared' (an experiment's own
-- contrasts, var declared_contrasts, possibly between two systems: embedder = the treatment arm's,
-- control_embedder = the control's); a declared contrast never changes C1-C4's Holm p.
-- is_primary marks the pre-registered cell (vars primary_metric x primary_embedder x primary_reranker);
-- every other cell is exploratory.
with arms as (
    select * from {{ ref('int_contrast_arms') }}
),

holm as (
    {{ holm_by_family(ref('int_contrast_bootstrap'), ['family', 'corpus', 'embedder', 'reranker', 'metric'],
                      ['contrast', 'control_embedder']) }}
)

select
    b.contrast::varchar as contrast,
    b.family::varchar as family,
    a.treatment::varchar as treatment,
    a.control::varchar as control,
    b.corpus::varchar as corpus,
    b.embedder::varchar as embedder,
    b.control_embedder::varchar as control_embedder,
    b.reranker::varchar as reranker,
    b.metric::varchar as metric,
    b.n_queries::bigint as n_queries,
    b.n_docs::bigint as n_docs,
    b.mean_delta::double as mean_delta,
    b.ci_low::double as ci_low,
    b.ci_high::double as ci_high,
    b.p_value::double as p_value,
    h.p_holm::double as p_holm,
    h.family_size::bigint as family_size,
    b.dz::double as dz,
    b.is_primary::boolean as is_primary,
    b.n_boot::bigint as n_boot,
    b.n_far_side::bigint as n_far_side
from {{ ref('int_contrast_bootstrap') }} as b
inner join holm as h
    on h.family = b.family and h.corpus = b.corpus and h.embedder = b.embedder and h.reranker = b.reranker
    and h.metric = b.metric and h.contrast = b.contrast and h.control_embedder = b.control_embedder
inner join arms as a on a.contrast = b.contrast
