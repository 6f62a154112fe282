{#- The query-rewriting study's paired bootstrap (udfs/stats/bootstrap.py::paired_bootstrap): the mean of a list of
    per-query values (paired deltas, one per query in query_id order) resampled by query, with the study's
    B (var rewriting_bootstrap_b) and seed (var rewriting_bootstrap_seed). Returns the UDF's STRUCT
    (estimate, ci_low, ci_high, p_value, se, n, n_clusters, n_far). -#}
{% macro rewriting_bootstrap(values) -%}
paired_bootstrap({{ values }}, {{ setting('rewriting_bootstrap_b') }}, {{ setting('rewriting_bootstrap_seed') }})
{%- endmacro %}

{#- rewrite_score_distribution's two scopes of one aggregation: per (cell, strategy, source `which`, seed)
    ('seed') and pooled over seeds ('pooled', seed NULL), over `relation`'s rows that pass `where`. -#}
{% macro score_scopes(relation, aggregates, where=none) -%}
select
        corpus, embedder, reranker, strategy, which,
        case when grouping(seed) = 0 then 'seed' else 'pooled' end as scope,
        seed,
        {{ aggregates }}
    from {{ relation }}
    {% if where %}where {{ where }}
    {% endif %}group by grouping sets (
        (corpus, embedder, reranker, strategy, which, seed), (corpus, embedder, reranker, strategy, which))
{%- endmacro %}
