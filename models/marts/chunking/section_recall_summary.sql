{{ config(tags=['evaluation']) }}
-- Two-stage conditions (A4, G4): how often stage 1 kept a section overlapping the gold evidence.
-- section_recall = n_recalled / n_judged; queries without chunk-level evidence (NULL) are counted
-- in n_unjudged, not in the rate.
select
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    condition::varchar as condition,
    count(*)::bigint as n_queries,
    count(section_recall)::bigint as n_judged,
    (count(*) - count(section_recall))::bigint as n_unjudged,
    count(*) filter (where section_recall)::bigint as n_recalled,
    (count(*) filter (where section_recall) / nullif(count(section_recall), 0))::double as section_recall
from {{ ref('int_routed_queries') }}
group by all
