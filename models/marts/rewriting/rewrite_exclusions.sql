{{ config(tags=['rewriting']) }}
-- The study's funnel per cell: every ranking, group and answer lands in exactly one reason.
--   scope 'ranking'  per strategy: scored | nan_score | unknown_query | no_relevant_qrels (int_eval_queries' status)
--   scope 'group'    (cell, seed, query) of the solo strategies: complete (in ensembles, oracle, router)
--                    | incomplete (some solo strategy of the cell has no scored ranking for it)
--   scope 'answer'   per reader setting: scored | no_gold_answer
select corpus::varchar as corpus, embedder::varchar as embedder, reranker::varchar as reranker,
    'ranking'::varchar as scope, strategy::varchar as item, status::varchar as reason, count(*)::bigint as n
from {{ ref('int_rewrite_rankings') }}
group by all
union all
select corpus, embedder, reranker, 'group', '(solo strategies)',
    case when complete then 'complete' else 'incomplete' end, count(*)
from {{ ref('int_rewrite_groups') }}
group by all
union all
select corpus, embedder, reranker, 'answer', setting, status, count(*)
from {{ ref('rewrite_answer_scores') }}
group by all
