{{ config(tags=['rewriting']) }}
-- What a strategy's texts cost per (corpus, embedder, strategy, seed, query): its distinct LLM calls
-- (rewrites.llm_call_key; several texts from one answer share a call) with their tokens from
-- llm_calls (prompt_tokens read, completion_tokens written). Every call counts, whether or not its
-- texts passed the cosine filter. n_calls_unlogged: keys missing from llm_calls; n_calls_without_tokens:
-- calls whose backend reported no token counts (their tokens are not in the sums).
with calls as (
    select distinct corpus, embedder, strategy, seed, query_id, llm_call_key
    from {{ ref('stg_rewrites') }}
    where llm_call_key is not null
)

select
    c.corpus::varchar as corpus,
    c.embedder::varchar as embedder,
    c.strategy::varchar as strategy,
    c.seed::integer as seed,
    c.query_id::varchar as query_id,
    count(*)::bigint as n_calls,
    count(*) filter (where l.cache_key is null)::bigint as n_calls_unlogged,
    count(*) filter (where l.prompt_tokens is null or l.completion_tokens is null)::bigint as n_calls_without_tokens,
    coalesce(sum(l.prompt_tokens), 0)::bigint as prompt_tokens,
    coalesce(sum(l.completion_tokens), 0)::bigint as completion_tokens
from calls as c
left join {{ ref('stg_llm_calls') }} as l on l.cache_key = c.llm_call_key
group by all
