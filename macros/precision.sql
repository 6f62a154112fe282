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

{#- The one stored name of `relation`.`column` that `wanted` means (the names_model rule), as a SQL
    literal: itself when stored, else its one stored precision variant; several variants are a
    compiler error listing them. When the relation is absent or nothing matches (nothing built yet),
    `wanted` itself (the query then returns no rows). While dbt parses: `wanted`. -#}
{% macro stored_model(relation, column, wanted) -%}
{%- if execute and wanted != 'none' -%}
{%- set exists = adapter.get_relation(database=relation.database, schema=relation.schema,
                                      identifier=relation.identifier) -%}
{%- if exists is not none -%}
{%- set rows = run_query("select distinct " ~ column ~ " from " ~ relation ~ " where " ~ names_model(column, wanted)
                         ~ " order by 1").columns[0].values() -%}
{%- if rows | length > 1 -%}
{{ exceptions.raise_compiler_error(column ~ " '" ~ wanted ~ "' matches several stored precisions (" ~ (rows | join(', ')) ~ "): pass one of them, e.g. --vars '{primary_" ~ column ~ ": " ~ rows[0] ~ "}'") }}
{%- elif rows | length == 1 -%}
{{ return("'" ~ rows[0] ~ "'") }}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{{ return("'" ~ wanted ~ "'") }}
{%- endmacro %}
