{#- Does the stored model name in `column` (embedder or reranker, ingest/retrieval/precision.py: the
    model name, then '@bf16' / '@fp16' unless fp32) match `wanted`? A `wanted` with a precision suffix
    matches exactly; one without names the model at any precision ('all-MiniLM-L6-v2' matches
    'all-MiniLM-L6-v2' and 'all-MiniLM-L6-v2@bf16'). -#}
{% macro names_model(column, wanted) -%}
({{ column }} = '{{ wanted }}'
    or (not regexp_matches('{{ wanted }}', '@(fp32|bf16|fp16)$')
        and regexp_replace({{ column }}, '@(fp32|bf16|fp16)$', '') = '{{ wanted }}'))
{%- endmacro %}

{#- names_model for a system named by another column (declared contrasts' arms): the same rule -#}
{% macro names_system(column, wanted_column) -%}
({{ column }} = {{ wanted_column }}
    or (not regexp_matches({{ wanted_column }}, '@(fp32|bf16|fp16)$')
        and regexp_replace({{ column }}, '@(fp32|bf16|fp16)$', '') = {{ wanted_column }}))
{%- endmacro %}
