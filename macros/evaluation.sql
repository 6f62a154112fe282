{#- The relevance rule (chunking ablation, arXiv 2610.10170) on half-open character intervals (content offsets,
    prefixes excluded):
    a chunk [cs, ce) is relevant to a gold span [ss, se) of the same document iff the overlap covers
    >= 50% of the span's characters or >= 80% of the chunk's characters lie inside the span.
    Integer arithmetic (2·ov >= span, 5·ov >= 4·chunk), so no rounding decides a borderline case. -#}
{% macro span_overlap(cs, ce, ss, se) -%}
(least({{ ce }}, {{ se }}) - greatest({{ cs }}, {{ ss }}))
{%- endmacro %}

{% macro span_relevant(cs, ce, ss, se) -%}
({{ span_overlap(cs, ce, ss, se) }} > 0 and (
    2 * {{ span_overlap(cs, ce, ss, se) }} >= ({{ se }} - {{ ss }})
    or 5 * {{ span_overlap(cs, ce, ss, se) }} >= 4 * ({{ ce }} - {{ cs }})))
{%- endmacro %}
