{{ config(tags=['evaluation']) }}
-- No metric may be cut deeper than the run it scores was retrieved: R@50 of a 5-deep run would
-- silently be R@5. Compares each rank cutoff (`@N`; the token budgets of TBC@N are not ranks) with
-- the depth k the run was retrieved to (run_manifest); the build fails naming the first such run.
-- Imported runs are scored as submitted (an outside system's list may be shorter: trec_eval's
-- convention), so only the runs this project retrieves (dense, bm25, their reranks) are checked.
with cut as (
    select distinct corpus, embedder, reranker, condition, metric,
        regexp_extract(metric, '@([0-9]+)$', 1) as cutoff
    from {{ ref('query_metrics') }}
    where not starts_with(metric, 'TBC')
), deep as (
    select c.*, m.k from cut c
    join {{ ref('stg_run_manifest') }} m using (corpus, embedder, reranker, condition)
    where c.cutoff <> '' and c.cutoff::integer > m.k and coalesce(m.system_kind, 'dense') <> 'imported'
)
select error('metric ' || metric || ' is cut deeper than run ' || corpus || ' / ' || embedder || ' / ' || reranker
    || ' / ' || condition || ' was retrieved (k = ' || k || '; ' || (select count(*) from deep)
    || ' run x metric pairs like it): retrieve with k >= ' || (select max(cutoff::integer) from deep) || ' (`ragwh retrieve --k`)') as problem
from (select * from deep order by corpus, embedder, reranker, condition, metric limit 1)
