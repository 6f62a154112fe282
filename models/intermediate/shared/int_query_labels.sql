{{ config(tags=['evaluation', 'rewriting']) }}
-- Every label of every query, long: one row per (query, label) with the query's value. The labels a contrast
-- is sliced by (contrast_slices, rewrite_slices). Three origins:
--   warehouse  derived here from the loaded tables (names and meanings: seeds/slice_labels.csv)
--                query_type    queries.query_type (QASPER answer type, HotpotQA bridge / comparison, AmbigNQ
--                              single / ambiguous, EnterpriseRAG question type, ...: the loader's typing)
--                topic_bucket  the query's document's topic bucket (where it has one)
--                doc_length    tertile of the query's document's length in characters within its corpus
--                              (ntile(3) over the corpus's documents ordered by length, then doc_id)
--                gold_depth    the deepest section level of the query's document's gold heading tree
--   loader     written into table labels by a corpus loader (also listed in seeds/slice_labels.csv)
--   analyst    `ragwh label add` (table labels): a query label applies to the query, a document label to
--              the queries whose doc_id is that document
-- A query without a value of a label (no document, no gold tree, no analyst row) is in none of its slices.
with doc_length as (
    select doc_id,
        case ntile(3) over (partition by corpus order by length(text), doc_id)
            when 1 then 'short' when 2 then 'medium' else 'long' end as value
    from {{ ref('stg_documents') }}
),

gold_depth as (
    select doc_id, max(level)::varchar as value
    from {{ ref('stg_sections') }}
    where structure = 'gold'
    group by doc_id
),

doc_labels as (
    select doc_id, 'doc_length' as label, value, 'warehouse' as origin from doc_length
    union all
    select doc_id, 'gold_depth', value, 'warehouse' from gold_depth
    union all
    select doc_id, 'topic_bucket', topic_bucket, 'warehouse'
    from {{ ref('stg_documents') }} where topic_bucket is not null
    union all
    select id, label, value, origin from {{ ref('stg_labels') }} where entity = 'documents'
)

select q.corpus, q.query_id, q.doc_id, 'query_type' as label, q.query_type as value, 'warehouse' as origin
from {{ ref('stg_queries') }} as q
union all
select q.corpus, q.query_id, q.doc_id, l.label, l.value, l.origin
from {{ ref('stg_queries') }} as q
inner join {{ ref('stg_labels') }} as l on l.entity = 'queries' and l.id = q.query_id
union all
select q.corpus, q.query_id, q.doc_id, d.label, d.value, d.origin
from {{ ref('stg_queries') }} as q
inner join doc_labels as d on d.doc_id = q.doc_id
