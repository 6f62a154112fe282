-- Exploratory: mean paired delta of each contrast per query type in the primary cell, as a description. The
-- same slices WITH their uncertainty (clustered bootstrap CI, p, Holm, heterogeneity test) and by any other
-- label are in the mart contrast_slices (`ragwh slice --contrast C2 --by query_type`; docs/slicing.md).
-- The primary cell is the warehouse's (settings primary_*; a bare model name matches its stored
-- precision variant, e.g. all-MiniLM-L6-v2 -> all-MiniLM-L6-v2@bf16: macro stored_model).
select
    d.contrast, d.corpus, q.query_type,
    count(*) as n_queries,
    avg(d.delta) as mean_delta
from {{ ref('int_contrast_deltas') }} as d
inner join {{ ref('int_eval_queries') }} as q on q.query_id = d.query_id
where d.metric = '{{ setting("primary_metric") }}'
    and d.embedder = {{ stored_model(ref('int_contrast_deltas'), 'embedder', setting('primary_embedder')) }}
    and d.reranker = {{ stored_model(ref('int_contrast_deltas'), 'reranker', setting('primary_reranker')) }}
group by all
order by d.contrast, d.corpus, q.query_type
