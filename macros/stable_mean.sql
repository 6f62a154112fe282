{#- Order-stable aggregates: the mean (and the sample standard deviation) of a group's values, summed in
    sorted order, so a rebuild gives the same double bit for bit whatever order DuckDB's threads hand the
    rows over in (a float sum depends on its order):
        stable_avg('x')          -> avg(x order by x)
        stable_stddev_samp('x')  -> stddev_samp(x order by x)
    The argument is the SQL expression as a string; it is written twice (the aggregate's input and its
    sort key). Any further clause follows the call: {{ stable_avg('score') }} filter (where hit = 1).
    Sorting costs a per-group sort; over exact inputs (metric values and their differences) exact_avg
    (macros/exact_avg.sql) gives an order-free mean without one. -#}
{% macro stable_avg(expr) -%}
avg({{ expr }} order by {{ expr }})
{%- endmacro %}

{% macro stable_stddev_samp(expr) -%}
stddev_samp({{ expr }} order by {{ expr }})
{%- endmacro %}
