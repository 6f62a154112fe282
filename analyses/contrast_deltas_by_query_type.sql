-- Exploratory: mean paired delta of each contrast per query type in the primary cell (no inference:
-- the clustered bootstrap is run on the whole cell only; read this as a description).
select
    d.contrast, d.corpus, q.query_type,
    count(*) as n_queries,
    avg(d.delta) as mean_delta
from {{ ref('int_contrast_deltas') }} as d
inner join {{ ref('int_eval_queries') }} as q on q.query_id = d.query_id
where d.metric = '{{ var("primary_metric") }}'
    and d.embedder = '{{ var("primary_embedder") }}'
    and d.reranker = '{{ var("primary_reranker") }}'
group by all
order by d.contrast, d.corpus, q.query_type
