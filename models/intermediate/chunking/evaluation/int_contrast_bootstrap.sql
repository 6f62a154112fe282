{{ config(tags=['evaluation']) }}
-- Document-clustered bootstrap (udfs/stats/bootstrap.py; B = var bootstrap_b, seed = var bootstrap_seed)
-- of the mean paired delta per contrast and cell, with Cohen's dz (udfs/stats/effects.py). Computed once;
-- contrasts, contrast_mde and primary_contrasts read it. n_far_side: replicates on the far side of
-- zero (p = min(1, 2 n_far_side / B); p = 0 means none crossed: shown as "< 1/B").
-- is_primary: the pre-registered cell, metric = var primary_metric, reranker = var primary_reranker,
-- embedder = var primary_embedder; a var without a precision suffix ('BAAI/bge-large-en-v1.5', the
-- study default) names the model at whatever precision it ran ('...@bf16', '...@fp16'), a var with
-- one (what `ragwh run` passes) exactly that run; declared contrasts (family 'declared') are never
-- primary. int_contrast_mixedlm reads is_primary from here. control_embedder: the control arm's system.
with lists as (
    select
        contrast, family, corpus, embedder, control_embedder, reranker, metric,
        list(delta order by cluster_id, query_id) as deltas,
        list(cluster_id order by cluster_id, query_id) as clusters
    from {{ ref('int_contrast_deltas') }}
    group by contrast, family, corpus, embedder, control_embedder, reranker, metric
),

boot as (
    select
        contrast, family, corpus, embedder, control_embedder, reranker, metric,
        cluster_bootstrap(deltas, clusters, {{ setting('bootstrap_b') }}, {{ setting('bootstrap_seed') }}) as b,
        cohens_dz(deltas) as dz
    from lists
)

select
    contrast, family, corpus, embedder, control_embedder, reranker, metric,
    b.n as n_queries,
    b.n_clusters as n_docs,
    b.estimate as mean_delta,
    b.ci_low,
    b.ci_high,
    b.p_value,
    b.se as se_boot,
    b.n_far as n_far_side,
    {{ setting('bootstrap_b') }} as n_boot,
    case when isnan(dz) then null else dz end as dz,
    family = 'preregistered'
        and metric = '{{ setting("primary_metric") }}'
        and {{ names_model('embedder', setting('primary_embedder')) }}
        and {{ names_model('reranker', setting('primary_reranker')) }} as is_primary
from boot
