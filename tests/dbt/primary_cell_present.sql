{{ config(tags=['evaluation']) }}
-- The pre-registered primary cell (settings primary_metric x primary_embedder x primary_reranker) must
-- be among the computed contrasts: when contrasts exist and none is in the cell, primary_contrasts
-- is empty and is_primary false everywhere, so the build fails and says which cells are stored. A
-- bare model name that matches several stored precisions is refused with the list.
with rows as (
    select * from {{ ref('int_contrast_bootstrap') }}
), summary as (
    select count(*) as n, count(*) filter (where is_primary) as n_primary,
        count(distinct embedder) filter (where is_primary) as n_embedders,
        count(distinct reranker) filter (where is_primary) as n_rerankers,
        string_agg(distinct embedder, ', ' order by embedder) filter (where is_primary) as primary_embedders,
        string_agg(distinct reranker, ', ' order by reranker) filter (where is_primary) as primary_rerankers,
        string_agg(distinct metric, ', ' order by metric) as metrics,
        string_agg(distinct embedder, ', ' order by embedder) as embedders,
        string_agg(distinct reranker, ', ' order by reranker) as rerankers
    from rows
)
select error('the primary cell {{ setting("primary_metric") }} x {{ setting("primary_embedder") }} x reranker '
    || '{{ setting("primary_reranker") }} matches none of the ' || n || ' contrast rows (their metrics: ' || metrics
    || '; embedders: ' || embedders || '; rerankers: ' || rerankers || '): set primary: in the experiment config and '
    || 'rerun `ragwh run`, or pass --vars {primary_embedder: ..., primary_reranker: ..., primary_metric: ...}') as problem
from summary where n > 0 and n_primary = 0
union all
select error('the primary cell names several stored systems (embedders: ' || primary_embedders || '; rerankers: '
    || primary_rerankers || '): name one with its precision suffix, e.g. --vars {primary_embedder: '
    || split_part(primary_embedders, ', ', 1) || '}')
from summary where n_embedders > 1 or n_rerankers > 1
