{{ config(tags=['evaluation']) }}
-- How many queries each arm of a contrast had in a cell, and how many the pairing (intersection)
-- kept: n_only_treatment / n_only_control queries were dropped because the other arm lacks them.
with family as (
    select contrast, treatment, control from {{ ref('contrast_family') }}
),

t as (
    select f.contrast, m.corpus, m.embedder, m.reranker, m.metric, m.query_id
    from family as f inner join {{ ref('query_metrics') }} as m on m.condition = f.treatment
),

c as (
    select f.contrast, m.corpus, m.embedder, m.reranker, m.metric, m.query_id
    from family as f inner join {{ ref('query_metrics') }} as m on m.condition = f.control
)

select
    coalesce(t.contrast, c.contrast)::varchar as contrast,
    coalesce(t.corpus, c.corpus)::varchar as corpus,
    coalesce(t.embedder, c.embedder)::varchar as embedder,
    coalesce(t.reranker, c.reranker)::varchar as reranker,
    coalesce(t.metric, c.metric)::varchar as metric,
    count(t.query_id)::bigint as n_treatment,
    count(c.query_id)::bigint as n_control,
    count(*) filter (where t.query_id is not null and c.query_id is not null)::bigint as n_paired,
    count(*) filter (where c.query_id is null)::bigint as n_only_treatment,
    count(*) filter (where t.query_id is null)::bigint as n_only_control
from t
full outer join c
    on c.contrast = t.contrast and c.corpus = t.corpus and c.embedder = t.embedder
    and c.reranker = t.reranker and c.metric = t.metric and c.query_id = t.query_id
group by all
