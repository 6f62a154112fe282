{{ config(materialized='view', tags=['evaluation']) }}
-- Every query a two-stage condition (A4, G4) routed: whether stage 1 kept a section overlapping the
-- gold evidence (NULL when the query has no chunk-level evidence). What section_recall_summary counts.
select
    corpus,
    embedder,
    condition,
    query_id,
    section_recall
from {{ ref('stg_routing') }}
