{{ config(materialized='view', tags=['rewriting']) }}
-- Every accepted gold answer of a query (several rows = aliases: AmbigNQ's answer aliases; HotpotQA's
-- answer, EnterpriseRAG's gold_answer). What rewrite_answer_scores scores the reader's answers against.
select
    query_id,
    answer_idx,
    answer
from {{ ref('stg_query_answers') }}
