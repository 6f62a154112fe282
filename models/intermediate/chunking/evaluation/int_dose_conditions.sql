{{ config(materialized='view', tags=['evaluation']) }}
-- The conditions of the dose-response families, from the conditions seed: structural chunking, flat
-- retrieval, prefix none | path; family = the structure (gold | induced), dose = prefix_depth (induced:
-- A2=0, A3-d1=1, A3-d2=2, A3=3; gold: G2, G3-d1, G3-d2, G3). What dose_response reads.
select
    condition,
    structure as family,
    prefix_depth as dose
from {{ ref('conditions') }}
where chunking = 'structural' and retrieval = 'flat' and prefix_kind in ('none', 'path')
