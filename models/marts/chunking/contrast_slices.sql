{{ config(tags=['evaluation']) }}
-- Exploratory: every contrast of every cell sliced by every label (int_query_labels: the built-in labels of
-- seeds/slice_labels.csv and the analysts' of `ragwh label add`). Per (contrast, cell, label, value): the
-- paired per-query deltas of int_contrast_deltas whose query has that value, their mean, the document-
-- clustered bootstrap CI and two-sided p (the contrasts' kernel, udfs/stats/bootstrap.py, with their B and seed:
-- settings bootstrap_b, bootstrap_seed), Holm within the (contrast, cell, label) family (udfs/stats/multiple.py);
-- macros/slices.sql. A slice below settings slice_min_queries / slice_min_docs is flagged and gets no p, no
-- Holm p and no place in the family or the heterogeneity test. Per (contrast, cell, label), repeated on each of
-- its rows: does the delta differ between the label's values (udfs/stats/heterogeneity.py: n-weighted
-- between-slice spread, clustered bootstrap with the null imposed, same B and seed; over the slices that meet
-- the minimum, at least two).
-- docs/slicing.md says why that test.
with labelled as (
    select
        d.contrast, d.family, d.corpus, d.embedder, d.control_embedder, d.reranker, d.metric,
        l.label, l.value, l.origin, d.query_id, d.cluster_id as doc_id, d.cluster_id as unit, d.delta
    from {{ ref('int_contrast_deltas') }} as d
    inner join {{ ref('int_query_labels') }} as l on l.query_id = d.query_id
),

sliced as (
    {{ slice_contrasts('labelled',
                       ['contrast', 'family', 'corpus', 'embedder', 'control_embedder', 'reranker', 'metric'],
                       'cluster', setting('bootstrap_b'), setting('bootstrap_seed'), min_docs=true) }}
)

select
    s.contrast::varchar as contrast,
    s.family::varchar as family,
    s.corpus::varchar as corpus,
    s.embedder::varchar as embedder,
    s.control_embedder::varchar as control_embedder,
    s.reranker::varchar as reranker,
    s.metric::varchar as metric,
    c.is_primary::boolean as is_primary_cell,
    {{ slice_columns('bootstrap_b', 'bootstrap_seed') }}
from sliced as s
inner join {{ ref('int_contrast_bootstrap') }} as c
    on c.contrast = s.contrast and c.family = s.family and c.corpus = s.corpus and c.embedder = s.embedder
    and c.control_embedder = s.control_embedder and c.reranker = s.reranker and c.metric = s.metric
