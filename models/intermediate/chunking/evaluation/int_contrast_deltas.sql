{{ config(tags=['evaluation']) }}
-- Paired per-query deltas (treatment - control) for every contrast (int_contrast_arms: the seed's
-- pre-registered family and the experiment's declared contrasts), in every cell (corpus x embedder x
-- reranker x metric), over the queries scored under both arms (the intersection; contrast_pairing
-- counts what each arm had alone). embedder is the treatment arm's system, control_embedder the
-- control's (the same for C1-C4; a declared contrast between two systems differs). cluster_id is
-- the resampling unit of the bootstrap: the query's document; queries without one (corpus-level BEIR
-- queries) are their own cluster.
with arms as (
    select * from {{ ref('int_contrast_arms') }}
)

select
    f.contrast,
    f.family,
    t.corpus,
    t.embedder,
    c.embedder as control_embedder,
    t.reranker,
    t.metric,
    t.query_id,
    coalesce(t.doc_id, t.query_id) as cluster_id,
    t.value as treatment_value,
    c.value as control_value,
    t.value - c.value as delta
from arms as f
inner join {{ ref('int_query_metrics') }} as t
    on t.condition = f.treatment
    and (f.t_system is null or {{ names_system('t.embedder', 'f.t_system') }})
inner join {{ ref('int_query_metrics') }} as c
    on c.condition = f.control
    and c.corpus = t.corpus and c.reranker = t.reranker
    and c.metric = t.metric and c.query_id = t.query_id
    and (case when f.same_system then c.embedder = t.embedder else {{ names_system('c.embedder', 'f.c_system') }} end)
