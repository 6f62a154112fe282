{#- Generic data test: the column holds a number in [0, 1] (NULL allowed; NaN and out-of-range fail). -#}
{% test unit_interval(model, column_name) %}
select {{ column_name }}
from {{ model }}
where {{ column_name }} < 0 or {{ column_name }} > 1 or isnan({{ column_name }})
{% endtest %}
