{{ config(tags=['evaluation']) }}
-- Paired per-query deltas (treatment - control) for every contrast of the seed, in every cell
-- (corpus x embedder x reranker x metric), over the queries scored under both arms (the
-- intersection; contrast_pairing counts what each arm had alone). cluster_id is the resampling
-- unit of the bootstrap: the query's document; queries without one (corpus-level BEIR queries)
-- are their own cluster.
with family as (
    select contrast, treatment, control from {{ ref('contrast_family') }}
)

select
    f.contrast,
    t.corpus,
    t.embedder,
    t.reranker,
    t.metric,
    t.query_id,
    coalesce(t.doc_id, t.query_id) as cluster_id,
    t.value as treatment_value,
    c.value as control_value,
    t.value - c.value as delta
from family as f
inner join {{ ref('query_metrics') }} as t on t.condition = f.treatment
inner join {{ ref('query_metrics') }} as c
    on c.condition = f.control
    and c.corpus = t.corpus and c.embedder = t.embedder and c.reranker = t.reranker
    and c.metric = t.metric and c.query_id = t.query_id
