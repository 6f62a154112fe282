{{ config(tags=['rewriting']) }}
-- Every reader answer (reader_answers, written by the reader stage) scored against the
-- query's gold answers (query_answers; several rows = aliases): SQuAD v1.1 normalization, exact match
-- and token F1, each the max over the aliases (udfs/metrics/squad.py). A query without a gold answer
-- keeps its row with status 'no_gold_answer' and NULL scores (never silently dropped).
with gold as (
    select query_id, list(answer order by answer_idx) as golds
    from {{ ref('int_query_answers') }}
    group by query_id
),

scored as (
    select a.corpus, a.embedder, a.reranker, a.setting, a.helper, a.tau, a.seed, a.query_id,
        squad_score(a.answer, g.golds) as s
    from {{ ref('int_rewrite_reader_answers') }} as a
    inner join gold as g on g.query_id = a.query_id
)

select
    a.corpus::varchar as corpus,
    a.embedder::varchar as embedder,
    a.reranker::varchar as reranker,
    a.setting::varchar as setting,
    a.helper::varchar as helper,
    a.tau::double as tau,
    a.seed::integer as seed,
    a.query_id::varchar as query_id,
    a.top_k::integer as top_k,
    a.answer::varchar as answer,
    (case when s.query_id is null then 'no_gold_answer' else 'scored' end)::varchar as status,
    s.s.em::double as em,
    s.s.f1::double as f1
from {{ ref('int_rewrite_reader_answers') }} as a
left join scored as s
    on s.corpus = a.corpus and s.embedder = a.embedder and s.reranker = a.reranker and s.setting = a.setting
    and s.helper is not distinct from a.helper and s.tau is not distinct from a.tau
    and s.seed = a.seed and s.query_id = a.query_id
