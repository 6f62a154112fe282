{#- A Python value as a SQL varchar literal ('' quoting), NULL for None. -#}
{% macro sql_text(value) -%}
{%- if value is none -%}null::varchar{%- else -%}'{{ value | string | replace("'", "''") }}'::varchar{%- endif -%}
{%- endmacro %}
