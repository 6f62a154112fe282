{{ config(materialized='view', tags=['evaluation']) }}
-- Every contrast of the evaluation marts, one row each: the seed's pre-registered family (C1-C4;
-- contrast_family.csv, arms in the same system) and the contrasts an experiment declares (dbt var
-- declared_contrasts: rows {contrast, treatment, treatment_system, control, control_system}, each
-- system NULL or a stored embedder / system name, without a precision suffix meaning any precision).
-- An arm without a system is read in the other arm's system; with neither, both arms in every cell:
-- t_system / c_system are the systems the arms are read in (NULL: any), same_system whether both arms
-- are read in one embedder. A view: int_contrast_deltas, contrasts and contrast_pairing read one list.
with arms as (
    select
        contrast::varchar as contrast,
        'preregistered'::varchar as family,
        treatment::varchar as treatment,
        null::varchar as treatment_system,
        control::varchar as control,
        null::varchar as control_system
    from {{ ref('contrast_family') }}
    {%- for d in setting('declared_contrasts') %}
    union all
    select {{ sql_text(d['contrast']) }}, 'declared', {{ sql_text(d['treatment']) }},
        {{ sql_text(d.get('treatment_system')) }},
        {{ sql_text(d['control']) }}, {{ sql_text(d.get('control_system')) }}
    {%- endfor %}
)

select *,
    coalesce(treatment_system, control_system) as t_system,
    coalesce(control_system, treatment_system) as c_system,
    (coalesce(treatment_system, control_system) is not distinct from coalesce(control_system, treatment_system))
        as same_system
from arms
