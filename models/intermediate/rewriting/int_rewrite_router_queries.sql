{{ config(tags=['rewriting']) }}
-- Everything the router needs per (cell, helper, seed, query, metric) over the complete groups: the
-- baseline's top-1 score (its gate: rewrite_runs.score at rank 1, the reranker score, else the cosine),
-- the metric of the baseline alone, of the always-merge list (the max-score union of the baseline's and
-- the helper's lists, top 10: int_rewrite_ensemble_scores, rule 'max', subset {baseline, helper}) and of the
-- helper alone; what the helper's texts cost (int_rewrite_helper_costs; 0 calls when it made none); and the
-- query's cross-fitting fold, md5_number(query_id) % var router_folds (deterministic, seed-independent).
-- helper = every solo strategy but the baseline that the cell has runs for.
with helpers as (
    select strategy as helper, bit from {{ ref('int_rewrite_solo_strategies') }} where bit > 0
),

pairs as (
    select g.*, h.helper, h.bit
    from {{ ref('int_rewrite_groups') }} as g
    inner join helpers as h on (g.cell_mask >> h.bit) & 1 = 1
    where g.complete
),

merged as (
    select p.corpus, p.embedder, p.reranker, p.helper, p.seed, p.query_id, p.query_key,
        e.hit as "HIT@10", e.recall as "R@10", e.ndcg as "nDCG@10", e.mrr as "MRR@10"
    from pairs as p
    inner join {{ ref('int_rewrite_ensemble_scores') }} as e
        on e.group_id = p.group_id and e.subset_mask = (1 | (1 << p.bit)) and e.rule::varchar = 'max'
),

merged_long as (
    select * from merged unpivot (merge_value for metric in ("HIT@10", "R@10", "nDCG@10", "MRR@10"))
)

select
    m.corpus::varchar as corpus,
    m.embedder::varchar as embedder,
    m.reranker::varchar as reranker,
    m.helper::varchar as helper,
    m.seed::integer as seed,
    m.query_id::varchar as query_id,
    m.query_key::integer as query_key,
    (md5_number(m.query_id) % {{ setting('router_folds') }})::integer as fold,
    t.top1_score::double as top1_score,
    m.metric::varchar as metric,
    b.value::double as baseline_value,
    m.merge_value::double as merge_value,
    h.value::double as helper_value,
    coalesce(c.n_calls, 0)::bigint as n_calls,
    coalesce(c.n_calls_unlogged, 0)::bigint as n_calls_unlogged,
    coalesce(c.n_calls_without_tokens, 0)::bigint as n_calls_without_tokens,
    coalesce(c.prompt_tokens, 0)::bigint as prompt_tokens,
    coalesce(c.completion_tokens, 0)::bigint as completion_tokens
from merged_long as m
inner join {{ ref('int_rewrite_rankings') }} as t
    on t.strategy = '{{ setting("rewriting_baseline") }}' and t.corpus = m.corpus and t.embedder = m.embedder
    and t.reranker = m.reranker and t.seed = m.seed and t.query_id = m.query_id
inner join {{ ref('int_rewrite_query_metrics') }} as b
    on b.strategy = '{{ setting("rewriting_baseline") }}' and b.corpus = m.corpus and b.embedder = m.embedder
    and b.reranker = m.reranker and b.seed = m.seed and b.query_id = m.query_id and b.metric = m.metric
inner join {{ ref('int_rewrite_query_metrics') }} as h
    on h.strategy = m.helper and h.corpus = m.corpus and h.embedder = m.embedder
    and h.reranker = m.reranker and h.seed = m.seed and h.query_id = m.query_id and h.metric = m.metric
left join {{ ref('int_rewrite_helper_costs') }} as c
    on c.corpus = m.corpus and c.embedder = m.embedder and c.strategy = m.helper
    and c.seed = m.seed and c.query_id = m.query_id
