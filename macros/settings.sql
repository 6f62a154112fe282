{#- An experiment setting (dbt_project.yml's setting_defaults lists them): the value passed with
    `--vars '{NAME: ...}'` (an explicit override, null included), else the one the warehouse's last
    `ragwh run` of the study stored in table experiment_settings (warehouse/identity.py), else the
    default. While dbt parses (no database reads) it is the default. -#}
{% macro setting(name) -%}
{%- set defaults = var('setting_defaults') -%}
{%- if name not in defaults -%}
{{ exceptions.raise_compiler_error("unknown setting '" ~ name ~ "' (dbt_project.yml setting_defaults: "
                                   ~ (defaults.keys() | list | join(', ')) ~ ")") }}
{%- endif -%}
{%- set passed = var(name, '__setting_not_passed__') -%}
{%- if passed != '__setting_not_passed__' -%}
{{ return(passed) }}
{%- endif -%}
{%- if execute -%}
{%- set stored = stored_settings() -%}
{%- if name in stored -%}
{{ return(stored[name]) }}
{%- endif -%}
{%- endif -%}
{{ return(defaults[name]) }}
{%- endmacro %}

{#- name -> value of table experiment_settings ({} when the table does not exist) -#}
{% macro stored_settings() -%}
{%- set relation = adapter.get_relation(database=target.database, schema='main', identifier='experiment_settings') -%}
{%- if relation is none -%}
{{ return({}) }}
{%- endif -%}
{%- set result = run_query('select name, value_json from ' ~ relation) -%}
{%- set out = {} -%}
{%- for row in result.rows -%}
{%- do out.update({row[0]: fromjson(row[1])}) -%}
{%- endfor -%}
{{ return(out) }}
{%- endmacro %}
