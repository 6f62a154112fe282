{% if setting('reader_top_k') > 10 or setting('reader_top_k') < 1 %}
{{ exceptions.raise_compiler_error("var reader_top_k must lie in 1..10 (the merged lists keep 10 documents), got " ~ setting('reader_top_k')) }}
{% endif %}
{% if setting('reader_sample') is not none and setting('reader_sample') < 1 %}
{{ exceptions.raise_compiler_error("var reader_sample must be a positive number of queries or null (all), got " ~ setting('reader_sample')) }}
{% endif %}
{{ config(materialized='view', tags=['rewriting']) }}
-- What the reader stage reads (a view: the passages are joined when it reads, not stored): per (cell,
-- setting, helper, tau, seed, query) the top var reader_top_k documents in rank order with the query
-- text and each document's text, over the complete groups of the seeds in var reader_seeds (the paper:
-- 42) and, when var reader_sample is set (the paper: 200), that many of the cell's queries drawn at
-- random with seed var reader_sample_seed: the queries ranked by md5('<sample seed>|<query_id>'), the
-- first reader_sample kept (all when the cell has fewer).
--   S1            the baseline's ranking (helper and tau NULL)
--   always-merge  the max-score union of the baseline's and the helper's lists (int_rewrite_merge_lists),
--                 for each helper in var reader_helpers (tau NULL)
--   router        per tau of the cell's grid (int_rewrite_router_taus) and at the paper's tau (the
--                 same-dataset midpoint rule, int_rewrite_router_tau_fits): the always-merge list when the
--                 baseline's top-1 score < tau (expanded = true), else the baseline's
-- The setting names are reader_answers.setting's; the reader writes one answer per (cell, setting,
-- helper, tau, seed, query). Identical passages give identical prompts, which the LLM cache answers once.
with candidates as (
    select g.*, r.top1_score
    from {{ ref('int_rewrite_groups') }} as g
    inner join {{ ref('int_rewrite_rankings') }} as r
        on r.strategy = '{{ setting("rewriting_baseline") }}' and r.corpus = g.corpus and r.embedder = g.embedder
        and r.reranker = g.reranker and r.seed = g.seed and r.query_id = g.query_id
    where g.complete and list_contains({{ setting('reader_seeds') }}::integer[], g.seed)
),

sampled as (
    select corpus, embedder, reranker, query_id
    from (select distinct corpus, embedder, reranker, query_id from candidates) as distinct_queries
    {%- if setting('reader_sample') is not none %}
    qualify row_number() over (partition by corpus, embedder, reranker
                               order by md5('{{ setting("reader_sample_seed") }}|' || query_id), query_id)
        <= {{ setting('reader_sample') }}
    {%- endif %}
),

groups as (
    select c.*
    from candidates as c
    inner join sampled as s
        on s.corpus = c.corpus and s.embedder = c.embedder and s.reranker = c.reranker and s.query_id = c.query_id
),

taus as (
    -- the router's grid, the paper's fixed tau (rule paper, var router_paper_tau: the paper's answer-quality
    -- table) and the per-dataset in-sample midpoint (rule same_dataset, the project's addition)
    select corpus, embedder, reranker, tau from {{ ref('int_rewrite_router_taus') }}
    union
    select corpus, embedder, reranker, tau from {{ ref('int_rewrite_router_tau_fits') }}
    where rule in ('paper', 'same_dataset') and tau is not null
),

baseline as (
    select g.group_id, r.rank, r.doc_id, r.score
    from groups as g
    inner join {{ ref('int_rewrite_ranked_docs') }} as r
        on r.strategy = '{{ setting("rewriting_baseline") }}' and r.corpus = g.corpus and r.embedder = g.embedder
        and r.reranker = g.reranker and r.seed = g.seed and r.query_id = g.query_id
    where r.rank <= {{ setting('reader_top_k') }}
),

merged as (
    select m.group_id, h.strategy as helper, m.rank, m.doc_id, m.score
    from {{ ref('int_rewrite_merge_lists') }} as m
    inner join {{ ref('int_rewrite_solo_strategies') }} as h on h.bit = m.helper_bit
    where list_contains({{ setting('reader_helpers') }}::varchar[], h.strategy)
        and m.rank <= {{ setting('reader_top_k') }}
),

lists as (
    select g.corpus, g.embedder, g.reranker, 'S1' as setting, null::varchar as helper, null::double as tau,
        g.seed, g.query_id, null::boolean as expanded, b.rank, b.doc_id, b.score
    from groups as g
    inner join baseline as b on b.group_id = g.group_id
    union all
    select g.corpus, g.embedder, g.reranker, 'always-merge', m.helper, null, g.seed, g.query_id, null,
        m.rank, m.doc_id, m.score
    from groups as g
    inner join merged as m on m.group_id = g.group_id
    union all
    select g.corpus, g.embedder, g.reranker, 'router', h.helper, t.tau, g.seed, g.query_id, true,
        m.rank, m.doc_id, m.score
    from groups as g
    inner join taus as t
        on t.corpus = g.corpus and t.embedder = g.embedder and t.reranker = g.reranker and g.top1_score < t.tau
    inner join (select distinct helper from merged) as h on true
    inner join merged as m on m.group_id = g.group_id and m.helper = h.helper
    union all
    select g.corpus, g.embedder, g.reranker, 'router', h.helper, t.tau, g.seed, g.query_id, false,
        b.rank, b.doc_id, b.score
    from groups as g
    inner join taus as t
        on t.corpus = g.corpus and t.embedder = g.embedder and t.reranker = g.reranker and not g.top1_score < t.tau
    inner join (select distinct helper from merged) as h on true
    inner join baseline as b on b.group_id = g.group_id
)

select
    l.corpus::varchar as corpus,
    l.embedder::varchar as embedder,
    l.reranker::varchar as reranker,
    l.setting::varchar as setting,
    l.helper::varchar as helper,
    l.tau::double as tau,
    l.seed::integer as seed,
    l.query_id::varchar as query_id,
    q.text::varchar as query_text,
    l.expanded::boolean as expanded,
    {{ setting('reader_top_k') }}::integer as top_k,
    l.rank::integer as rank,
    l.doc_id::varchar as doc_id,
    l.score::double as score,
    d.text::varchar as passage
from lists as l
inner join {{ ref('int_query_texts') }} as q on q.query_id = l.query_id
inner join {{ ref('int_document_texts') }} as d on d.doc_id = l.doc_id
