{{ config(tags=['evaluation']) }}
-- Per (corpus, embedder, condition) with a first-stage run: how many condition texts are longer than
-- the embedder's window and how many tokens it never reads (ingest/retrieval/truncation.py):
--   max_tokens = max_seq_length - special tokens (all-MiniLM-L6-v2: 254 of 256; bge: 510 of 512)
--   truncated  <=> n_tokens > max_tokens, n_tokens = tokens of instruction + prefix + content
--   tokens_cut = sum of max(0, n_tokens - max_tokens): all content tokens (truncation cuts the end)
-- content_share_cut = tokens_cut / the content tokens of all the condition's texts. Texts without a
-- text_tokens row (embedded before it existed) are counted in n_uncounted, never as untruncated.
with ran as (
    select distinct corpus, embedder, condition
    from {{ ref('int_run_systems') }}
    where reranker = 'none' and coalesce(system_kind, 'dense') = 'dense'  -- BM25 and imported runs embed nothing
)

select
    ct.corpus::varchar as corpus,
    r.embedder::varchar as embedder,
    ct.condition::varchar as condition,
    max(t.max_tokens)::bigint as max_tokens,
    count(*)::bigint as n_texts,
    (count(*) filter (where t.n_tokens > t.max_tokens))::bigint as n_truncated,
    (count(*) filter (where t.n_tokens > t.max_tokens) / count(*))::double as share_truncated,
    coalesce(sum(greatest(t.n_tokens - t.max_tokens, 0)), 0)::bigint as tokens_cut,
    (coalesce(sum(greatest(t.n_tokens - t.max_tokens, 0)), 0) / nullif(sum(ct.content_tokens), 0))::double
        as content_share_cut,
    (coalesce(sum(greatest(t.n_tokens - t.max_tokens, 0)), 0)
        / nullif(count(*) filter (where t.n_tokens > t.max_tokens), 0))::double as mean_cut_when_truncated,
    (count(*) filter (where t.text_hash is null))::bigint as n_uncounted
from {{ ref('int_condition_texts') }} as ct
inner join ran as r on r.corpus = ct.corpus and r.condition = ct.condition
left join {{ ref('int_text_tokens') }} as t on t.embedder = r.embedder and t.text_hash = ct.text_hash
group by all
