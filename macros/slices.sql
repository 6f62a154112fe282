{#- A contrast's per-query deltas sliced by labels (marts contrast_slices, rewrite_slices; docs/slicing.md). `labelled`
    is a relation with the columns `keys` (a contrast in a cell), label, value, origin, query_id, doc_id (NULL for
    a query without a document), unit (the bootstrap's resampling unit: the document, or the query itself) and
    delta. Per (keys, label, value): n_queries, n_docs, below_min_size (fewer than setting slice_min_queries queries,
    or with `min_docs`, fewer than slice_min_docs documents), b = the bootstrap STRUCT of the mean delta (`bootstrap`:
    'cluster' = cluster_bootstrap over units, 'paired' = paired_bootstrap over queries in query_id order) with
    B = `n_boot` and seed `seed`, p_holm / holm_family_size (Holm within (keys, label) over the slices meeting the
    minimum; NULL below it), h = the heterogeneity STRUCT of (keys, label) (udfs/stats/heterogeneity.py, same B and seed,
    over the slices meeting the minimum; NULL with fewer than two). -#}
{% macro slice_contrasts(labelled, keys, bootstrap, n_boot, seed, min_docs) -%}
{%- set by = keys | join(', ') -%}
{%- set on_keys -%}{% for k in keys %}s.{{ k }} = l.{{ k }} and {% endfor %}{%- endset -%}
{%- set order = 'unit, query_id' if bootstrap == 'cluster' else 'query_id' -%}
with slice_lists as (
    select {{ by }}, label, value,
        min(origin) as origin,
        count(*) as n_queries,
        count(distinct doc_id) as n_docs,
        count(*) < {{ setting('slice_min_queries') }}
            {%- if min_docs %} or count(distinct unit) < {{ setting('slice_min_docs') }}{% endif %} as below_min_size,
        list(delta order by {{ order }}) as deltas,
        list(unit order by {{ order }}) as units
    from {{ labelled }}
    group by {{ by }}, label, value
),

slice_boot as materialized (
    -- ordered so that slices over the same units (one label value, every contrast and metric) reach the kernel
    -- together and share one draw of the resampling counts
    select * exclude (deltas, units),
        {%- if bootstrap == 'cluster' %}
        cluster_bootstrap(deltas, units, {{ n_boot }}, {{ seed }}) as b
        {%- else %}
        paired_bootstrap(deltas, {{ n_boot }}, {{ seed }}) as b
        {%- endif %}
    from (select * from slice_lists order by label, value, {{ by }})
),

slice_holm as (
    {{ holm_by_family('(select *, b.p_value as p from slice_boot where not below_min_size)', keys + ['label'],
                      ['value'], p_value='p') }}
),

slice_heterogeneity as (
    select {% for k in keys %}l.{{ k }}, {% endfor %}l.label,
        slice_heterogeneity(list(l.delta order by l.unit, l.query_id), list(l.unit order by l.unit, l.query_id),
                            list(l.value order by l.unit, l.query_id), {{ n_boot }}, {{ seed }}) as h
    from {{ labelled }} as l
    inner join slice_boot as s on {{ on_keys }}s.label = l.label and s.value = l.value and not s.below_min_size
    group by {% for k in keys %}l.{{ k }}, {% endfor %}l.label
    having count(distinct l.value) >= 2
)

select s.*, hm.p_holm, hm.family_size as holm_family_size, he.h
from slice_boot as s
left join slice_holm as hm on {% for k in keys %}hm.{{ k }} = s.{{ k }} and {% endfor %}hm.label = s.label and hm.value = s.value
left join slice_heterogeneity as he on {% for k in keys %}he.{{ k }} = s.{{ k }} and {% endfor %}he.label = s.label
{%- endmacro %}

{#- The columns both slice marts end with, from a `sliced` row `s` (label, value, sizes, the bootstrap struct `b`,
    Holm, the minimum-size flag, the heterogeneity struct `h`) and its cell `c` (the unsliced contrast); `b_setting`
    and `seed_setting` name the study's bootstrap settings. -#}
{% macro slice_columns(b_setting, seed_setting) -%}
s.label::varchar as label,
    s.origin::varchar as label_origin,
    s.value::varchar as value,
    s.n_queries::bigint as n_queries,
    s.n_docs::bigint as n_docs,
    s.b.estimate::double as mean_delta,
    s.b.ci_low::double as ci_low,
    s.b.ci_high::double as ci_high,
    case when s.below_min_size then null else s.b.p_value end::double as p_value,
    s.p_holm::double as p_holm,
    s.holm_family_size::bigint as holm_family_size,
    s.below_min_size::boolean as below_min_size,
    case when s.below_min_size then null else s.b.n_far end::bigint as n_far_side,
    {{ setting(b_setting) }}::bigint as n_boot,
    {{ setting(seed_setting) }}::bigint as boot_seed,
    c.mean_delta::double as cell_mean_delta,
    c.n_queries::bigint as cell_n_queries,
    s.h.statistic::double as heterogeneity_q,
    s.h.p_value::double as heterogeneity_p,
    s.h.n_exceed::bigint as heterogeneity_n_exceed,
    s.h.n_slices::bigint as heterogeneity_n_slices,
    'exploratory'::varchar as analysis
{%- endmacro %}
