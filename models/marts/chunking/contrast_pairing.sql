{{ config(tags=['evaluation']) }}
-- How many queries each arm of a contrast had in a cell, and how many the pairing (intersection)
-- kept: n_only_treatment / n_only_control queries were dropped because the other arm lacks them.
-- Contrasts within one system (C1-C4, declared ones without two systems) are listed in every cell
-- either arm has runs in (the other arm then shows 0); a declared contrast between two systems in the
-- cells both systems have runs in (embedder = the treatment's system, control_embedder = the control's).
with arms as (
    select * from {{ ref('int_contrast_arms') }}
),

t as (
    select f.contrast, f.same_system, m.corpus, m.embedder, m.reranker, m.metric, m.query_id
    from arms as f inner join {{ ref('int_query_metrics') }} as m
        on m.condition = f.treatment and (f.t_system is null or {{ names_system('m.embedder', 'f.t_system') }})
),

c as (
    select f.contrast, f.same_system, m.corpus, m.embedder, m.reranker, m.metric, m.query_id
    from arms as f inner join {{ ref('int_query_metrics') }} as m
        on m.condition = f.control and (f.c_system is null or {{ names_system('m.embedder', 'f.c_system') }})
),

within as (
    select
        coalesce(t.contrast, c.contrast) as contrast,
        coalesce(t.corpus, c.corpus) as corpus,
        coalesce(t.embedder, c.embedder) as embedder,
        coalesce(t.embedder, c.embedder) as control_embedder,
        coalesce(t.reranker, c.reranker) as reranker,
        coalesce(t.metric, c.metric) as metric,
        count(t.query_id) as n_treatment,
        count(c.query_id) as n_control,
        count(*) filter (where t.query_id is not null and c.query_id is not null) as n_paired,
        count(*) filter (where c.query_id is null) as n_only_treatment,
        count(*) filter (where t.query_id is null) as n_only_control
    from (select * from t where same_system) as t
    full outer join (select * from c where same_system) as c
        on c.contrast = t.contrast and c.corpus = t.corpus and c.embedder = t.embedder
        and c.reranker = t.reranker and c.metric = t.metric and c.query_id = t.query_id
    group by all
),

cross_cells as (
    select distinct t.contrast, t.corpus, t.embedder, c.embedder as control_embedder, t.reranker, t.metric
    from (select distinct contrast, corpus, embedder, reranker, metric from t where not same_system) as t
    inner join (select distinct contrast, corpus, embedder, reranker, metric from c where not same_system) as c
        on c.contrast = t.contrast and c.corpus = t.corpus and c.reranker = t.reranker and c.metric = t.metric
),

across as (
    select
        x.contrast, x.corpus, x.embedder, x.control_embedder, x.reranker, x.metric,
        (select count(*) from t where t.contrast = x.contrast and t.corpus = x.corpus and t.embedder = x.embedder
            and t.reranker = x.reranker and t.metric = x.metric) as n_treatment,
        (select count(*) from c where c.contrast = x.contrast and c.corpus = x.corpus
            and c.embedder = x.control_embedder and c.reranker = x.reranker and c.metric = x.metric) as n_control,
        (select count(*) from t inner join c using (contrast, corpus, reranker, metric, query_id)
            where t.contrast = x.contrast and t.corpus = x.corpus and t.embedder = x.embedder
            and c.embedder = x.control_embedder and t.reranker = x.reranker and t.metric = x.metric) as n_paired
    from cross_cells as x
),

counts as (
    select * from within
    union all
    select contrast, corpus, embedder, control_embedder, reranker, metric, n_treatment, n_control, n_paired,
        n_treatment - n_paired, n_control - n_paired
    from across
)

select
    contrast::varchar as contrast,
    corpus::varchar as corpus,
    embedder::varchar as embedder,
    control_embedder::varchar as control_embedder,
    reranker::varchar as reranker,
    metric::varchar as metric,
    n_treatment::bigint as n_treatment,
    n_control::bigint as n_control,
    n_paired::bigint as n_paired,
    n_only_treatment::bigint as n_only_treatment,
    n_only_control::bigint as n_only_control
from counts
