-- Exploratory: each condition's mean of the primary metric per topic bucket (Wikipedia), primary cell.
select c.corpus, c.condition, c.cut_value as topic_bucket, c.n_queries, c.mean_value
from {{ ref('metric_cuts') }} as c
where c.cut = 'topic_bucket'
    and c.cut_value <> '(none)'
    and c.metric = '{{ setting("primary_metric") }}'
    and c.embedder = {{ stored_model(ref('metric_cuts'), 'embedder', setting('primary_embedder')) }}
    and c.reranker = {{ stored_model(ref('metric_cuts'), 'reranker', setting('primary_reranker')) }}
order by c.corpus, c.cut_value, c.condition
