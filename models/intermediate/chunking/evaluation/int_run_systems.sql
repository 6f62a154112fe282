{{ config(materialized='view', tags=['evaluation']) }}
-- Every run of the run manifest with the first-stage system that produced it (system_kind: 'dense' |
-- 'bm25' | 'imported'; NULL for a run written before systems were recorded, a dense one) and its depth k.
-- What embedding_truncation (the dense first-stage runs) and shallow_runs (the imported runs) read.
select
    corpus,
    embedder,
    reranker,
    condition,
    system_kind,
    k
from {{ ref('stg_run_manifest') }}
