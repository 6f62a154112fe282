{#- Holm's step-down adjustment within families (udfs/stats/multiple.py, UDF holm_adjust): one row per test of
    `source` with its family's columns (`family_by`), its key columns (`keys`, unique within a family),
    family_size (the m the family was adjusted over) and p_holm. Each family's p-values are adjusted
    together in the order of `keys`; `p_value` is the expression of a test's unadjusted p. -#}
{% macro holm_by_family(source, family_by, keys, p_value='p_value') -%}
{%- set by = family_by | join(', ') -%}
{%- set order = keys | join(', ') -%}
select {{ by }}, family_size,
    {%- for k in keys %}
    unnest(key_{{ loop.index }}) as {{ k }},
    {%- endfor %}
    unnest(adjusted) as p_holm
from (
    select {{ by }},
        {%- for k in keys %}
        list({{ k }} order by {{ order }}) as key_{{ loop.index }},
        {%- endfor %}
        count(*) as family_size,
        holm_adjust(list({{ p_value }} order by {{ order }})) as adjusted
    from {{ source }}
    group by {{ by }}
)
{%- endmacro %}
