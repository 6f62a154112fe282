-- Exploratory: each condition's mean of the primary metric per query type, next to the condition's
-- overall mean, in the primary cell (compile with `dbt compile --select metric_cuts_by_query_type`).
select
    c.corpus, c.condition, c.cut_value as query_type, c.n_queries, c.mean_value,
    m.mean_value as condition_mean,
    c.mean_value - m.mean_value as difference
from {{ ref('metric_cuts') }} as c
inner join {{ ref('condition_means') }} as m
    on m.corpus = c.corpus and m.embedder = c.embedder and m.reranker = c.reranker
    and m.condition = c.condition and m.metric = c.metric
where c.cut = 'query_type'
    and c.metric = '{{ setting("primary_metric") }}'
    and c.embedder = {{ stored_model(ref('metric_cuts'), 'embedder', setting('primary_embedder')) }}
    and c.reranker = {{ stored_model(ref('metric_cuts'), 'reranker', setting('primary_reranker')) }}
order by c.corpus, c.cut_value, c.condition
