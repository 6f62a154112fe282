"""DDL of every table the Python jobs load. dbt reads these as sources; models never write them.

Offsets are always ``[char_start, char_end)`` into ``documents.text`` (content only: prefixes
never shift offsets). Every table exists from the first connection on, empty until loaded, so a
``dbt build`` on a fresh warehouse is green and simply produces empty marts.

Tables are keyed (uniqueness is enforced by dbt data tests, not by DuckDB indexes, so that the
delete-then-insert reloads in :func:`warehouse.db.replace_where` stay cheap).
"""

from __future__ import annotations

import functools

import duckdb
import pyarrow as pa

TABLES: dict[str, str] = {
    # --- corpora -------------------------------------------------------------------------
    "documents": """
        doc_id VARCHAR NOT NULL,        -- '<corpus>/<source id>', globally unique
        corpus VARCHAR NOT NULL,
        title VARCHAR NOT NULL,
        text VARCHAR NOT NULL,          -- flat text: title, blank line, then the body paragraphs
        topic_bucket VARCHAR,           -- Wikipedia: keyword bucket; QASPER: NULL
        split VARCHAR,                  -- source split (train/dev/test) or NULL
        source_file VARCHAR NOT NULL""",
    "paragraphs": """
        doc_id VARCHAR NOT NULL,
        para_idx INTEGER NOT NULL,      -- 0-based over the body (the title is not a paragraph)
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL""",
    "sections": """
        structure VARCHAR NOT NULL,     -- 'gold' or 'induced:<inducer>'
        doc_id VARCHAR NOT NULL,
        section_idx INTEGER NOT NULL,   -- pre-order position in the heading tree, 0-based
        parent_idx INTEGER,             -- NULL for level-1 sections
        level INTEGER NOT NULL,         -- 1..4 (wikitext '==' is level 1)
        title VARCHAR NOT NULL,
        para_start INTEGER NOT NULL,    -- subtree span: own paragraphs and all descendants', inclusive
        para_end INTEGER NOT NULL,
        char_start INTEGER NOT NULL,    -- = paragraphs[para_start].char_start
        char_end INTEGER NOT NULL       -- = paragraphs[para_end].char_end""",
    "queries": """
        query_id VARCHAR NOT NULL,      -- '<corpus>/<source id>'
        doc_id VARCHAR,                 -- the query's document (NULL for corpus-level queries: BEIR)
        corpus VARCHAR NOT NULL,
        text VARCHAR NOT NULL,
        query_type VARCHAR NOT NULL""",
    "evidence": """
        query_id VARCHAR NOT NULL,
        span_idx INTEGER NOT NULL,
        doc_id VARCHAR NOT NULL,
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL,
        match_method VARCHAR NOT NULL   -- exact | fuzzy | section | generated""",
    "qrels": """
        query_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        relevance INTEGER NOT NULL""",
    "funnel": """
        corpus VARCHAR NOT NULL,
        stage VARCHAR NOT NULL,         -- e.g. 'questions', 'papers', 'wiki_filter'
        reason VARCHAR NOT NULL,        -- 'input', 'kept', or the reason items were dropped
        n BIGINT NOT NULL""",
    "quarantine": """
        corpus VARCHAR NOT NULL,
        source_file VARCHAR NOT NULL,
        record_id VARCHAR NOT NULL,
        stage VARCHAR NOT NULL,
        reason VARCHAR NOT NULL""",
    "corpus_meta": """
        corpus VARCHAR NOT NULL,
        key VARCHAR NOT NULL,           -- e.g. 'sampling_seed', 'bucket_cap', 'bucket_size:biography'
        value VARCHAR NOT NULL""",
    "labels": """
        entity VARCHAR NOT NULL,        -- 'queries' | 'documents': what id names
        id VARCHAR NOT NULL,            -- a queries.query_id or documents.doc_id
        label VARCHAR NOT NULL,         -- e.g. 'difficulty' (never a built-in label's name: seeds/slice_labels.csv)
        value VARCHAR NOT NULL,         -- text; a contrast is sliced by it (marts contrast_slices, rewrite_slices)
        origin VARCHAR NOT NULL,        -- 'analyst' (ragwh label add) | 'loader' (a label a corpus loader knows)
        source_file VARCHAR NOT NULL    -- the CSV (analyst) or corpus file (loader) it came from""",
    # --- chunking and prefixes --------------------------------------------------------------
    "chunks": """
        chunkset VARCHAR NOT NULL,      -- 'fixed' | 'structural:<structure>' | 'doc' | 'sentence:<tokens>/<overlap>' (overlapping)
        chunk_id VARCHAR NOT NULL,      -- '<chunkset>|<doc_id>|<chunk_idx>'
        doc_id VARCHAR NOT NULL,
        chunk_idx INTEGER NOT NULL,
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL,
        content_tokens INTEGER NOT NULL,
        section_idx INTEGER             -- section of the chunkset's structure holding the chunk start""",
    "chunkset_docs": """
        chunkset VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        reference_structure VARCHAR,    -- fixed: the structure whose mean chunk length set the window
        target_tokens DOUBLE,           -- fixed: the window (mean structural content tokens)
        tokenizer VARCHAR NOT NULL""",
    "chunk_prefixes": """
        chunkset VARCHAR NOT NULL,
        chunk_id VARCHAR NOT NULL,
        prefix_kind VARCHAR NOT NULL,   -- 'path' | 'placebo' | 'llm_context' | 'title' (BEIR: title + ' ')
        depth INTEGER NOT NULL,         -- path elements kept (title included); 0 for llm_context
        prefix VARCHAR NOT NULL,        -- exact text placed before the content, separator included
        prefix_tokens INTEGER NOT NULL""",
    "placebo_paths": """
        structure VARCHAR NOT NULL,
        corpus VARCHAR NOT NULL,
        depth INTEGER NOT NULL,
        doc_id VARCHAR NOT NULL,
        path VARCHAR NOT NULL,          -- the real path (elements joined by ' › ')
        placebo_doc_id VARCHAR NOT NULL,
        placebo_path VARCHAR NOT NULL,
        same_document BOOLEAN NOT NULL, -- residual same-document assignment
        seed BIGINT NOT NULL""",
    # --- LLM stages -----------------------------------------------------------------------------
    "llm_calls": """
        cache_key VARCHAR NOT NULL,     -- sha256 of (model, messages, sampling params, seed, prompt version)
        model VARCHAR NOT NULL,
        prompt_name VARCHAR NOT NULL,
        prompt_version VARCHAR NOT NULL,
        item_id VARCHAR NOT NULL,       -- what the call was for (doc_id, chunk_id, ...)
        request_json VARCHAR NOT NULL,  -- messages + params + seed (never an API key)
        response_text VARCHAR NOT NULL,
        backend VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        prompt_tokens INTEGER,          -- tokens the model read / wrote, as the backend reports them
        completion_tokens INTEGER,      -- (NULL where a backend does not report them)
        finish_reason VARCHAR           -- 'stop' | 'length' (cut at max_tokens); NULL where the backend does not say""",
    "llm_failures": """
        cache_key VARCHAR NOT NULL,     -- the key the answer would have been cached under (never cached)
        model VARCHAR NOT NULL,
        prompt_name VARCHAR NOT NULL,
        prompt_version VARCHAR NOT NULL,
        item_id VARCHAR NOT NULL,
        backend VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        reason VARCHAR NOT NULL,        -- 'empty' | 'unusable' (the stage could not use it)
        response_text VARCHAR NOT NULL  -- what the backend answered""",
    "induction_log": """
        structure VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        status VARCHAR NOT NULL,        -- usable | repaired | failed
        n_sections INTEGER,
        detail VARCHAR NOT NULL,
        outcome VARCHAR,                -- induced:llm: legal_as_returned | legal_after_correction | repaired | failed
        structured BOOLEAN,             -- induced:llm: every request carried its JSON schema (structured output)
        schema_valid BOOLEAN            -- induced:llm: the first answer satisfies the schema (checked in both modes)""",
    # --- embeddings and runs ------------------------------------------------------------------
    "embeddings": """
        embedder VARCHAR NOT NULL,
        text_hash VARCHAR NOT NULL,     -- sha256 of the exact text embedded (query instruction excluded)
        vector FLOAT[] NOT NULL         -- L2-normalized""",
    "runs": """
        corpus VARCHAR NOT NULL,
        embedder VARCHAR NOT NULL,
        reranker VARCHAR NOT NULL,      -- 'none' for first-stage runs
        condition VARCHAR NOT NULL,
        query_id VARCHAR NOT NULL,
        rank INTEGER NOT NULL,          -- 1-based
        chunk_id VARCHAR NOT NULL,
        score DOUBLE NOT NULL""",
    "routing": """
        corpus VARCHAR NOT NULL,
        embedder VARCHAR NOT NULL,
        condition VARCHAR NOT NULL,
        query_id VARCHAR NOT NULL,
        routed_sections VARCHAR[] NOT NULL,  -- '<doc_id>#<section_idx>' of the kept top-level sections
        section_recall BOOLEAN             -- NULL when the query has no chunk-level evidence""",
    "run_manifest": """
        corpus VARCHAR NOT NULL,
        embedder VARCHAR NOT NULL,
        reranker VARCHAR NOT NULL,
        condition VARCHAR NOT NULL,
        fingerprint VARCHAR NOT NULL,   -- hash of the inputs; a run is recomputed only when it changes
        k INTEGER NOT NULL,
        n_queries INTEGER NOT NULL,
        created_at TIMESTAMP NOT NULL,
        system_kind VARCHAR,            -- the first-stage system whose name `embedder` holds: 'dense' | 'bm25' | 'imported'
                                        -- (NULL: a run written before systems were recorded, dense)
        system_params VARCHAR           -- JSON: dense model, precision, instruction; BM25 k1, b, method, tokenizer,
                                        -- stopwords, stemmer, versions; an imported run's file, sha256, lines, order""",
    # --- embedding windows -------------------------------------------------------------------------
    "text_tokens": """
        embedder VARCHAR NOT NULL,      -- as in embeddings (model name + precision suffix)
        text_hash VARCHAR NOT NULL,     -- a passage key of embeddings (int_condition_texts.text_hash)
        n_tokens INTEGER NOT NULL,      -- tokens of the encoded input (passage instruction + text), no special tokens
        max_tokens INTEGER NOT NULL     -- tokens of it the model reads: max_seq_length - its special tokens""",
    # --- query-rewriting study (arXiv 2609.05637) --------------------------------------------------
    "query_answers": """
        query_id VARCHAR NOT NULL,
        answer_idx INTEGER NOT NULL,    -- 0-based; several rows = accepted aliases of the gold answer
        answer VARCHAR NOT NULL         -- HotpotQA answer, EnterpriseRAG gold_answer, AmbigNQ answer aliases""",
    "rewrites": """
        corpus VARCHAR NOT NULL,
        embedder VARCHAR NOT NULL,      -- the cosine filter embeds with it, so 'kept' depends on it
        query_id VARCHAR NOT NULL,
        strategy VARCHAR NOT NULL,      -- seeds/rewrite_strategies.csv
        seed INTEGER NOT NULL,          -- LLM sampling seed (42, 123, 2024)
        variant_idx INTEGER NOT NULL,   -- 0 = the original query; 1.. = the LLM's texts in answer order
        text VARCHAR NOT NULL,          -- the exact text searched (Query2Doc: query [SEP] pseudo-doc)
        cosine DOUBLE,                  -- cos(embedding(text), embedding(original query)); NULL if not embedded
        kept BOOLEAN NOT NULL,          -- searched as one of the strategy's texts
        reason VARCHAR NOT NULL,        -- original | kept | cosine_low | cosine_high | identical | duplicate | fallback
        llm_call_key VARCHAR            -- llm_calls.cache_key of the answer the text came from (NULL: original)""",
    "rewrite_text_runs": """
        corpus VARCHAR NOT NULL,
        embedder VARCHAR NOT NULL,
        reranker VARCHAR NOT NULL,      -- 'none' when the stack has no cross-encoder
        pool INTEGER NOT NULL,          -- dense candidates reranked (20; 100 for the budget control; doubled
                                        -- until the pool holds the text's K distinct documents)
        strategy VARCHAR NOT NULL,
        seed INTEGER NOT NULL,
        query_id VARCHAR NOT NULL,
        variant_idx INTEGER NOT NULL,
        stage VARCHAR NOT NULL,         -- 'dense' (the pool) | 'rerank' | 'mmr' (the text's K documents, MMR order)
        rank INTEGER NOT NULL,          -- 1-based within (text, stage)
        chunk_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        score DOUBLE NOT NULL,          -- dense: cosine; rerank and mmr: the stage score (reranker, else cosine)
        ann_seed INTEGER,               -- the index seed of the HNSW graph that gave the pool (dense: hnsw, S1-ann4);
                                        -- NULL: exact search
        in_exact BOOLEAN                -- dense rows: the chunk is in exact search's top `pool` (HNSW recall);
                                        -- NULL on rerank and mmr rows and on rows written before it was recorded""",
    "rewrite_runs": """
        corpus VARCHAR NOT NULL,
        embedder VARCHAR NOT NULL,
        reranker VARCHAR NOT NULL,
        strategy VARCHAR NOT NULL,      -- a solo strategy or a control of seeds/rewrite_strategies.csv
        seed INTEGER NOT NULL,          -- S1 and other LLM-free rows are repeated under each seed
        query_id VARCHAR NOT NULL,
        rank INTEGER NOT NULL,          -- 1-based, at most 20 documents
        doc_id VARCHAR NOT NULL,
        score DOUBLE NOT NULL,          -- the document's max stage score over the strategy's texts
        variant_idx INTEGER NOT NULL    -- the text that gave the document its score""",
    "reader_answers": """
        corpus VARCHAR NOT NULL,
        embedder VARCHAR NOT NULL,
        reranker VARCHAR NOT NULL,
        setting VARCHAR NOT NULL,       -- 'S1' | 'always-merge' | 'router'
        helper VARCHAR,                 -- the strategy merged with S1 (NULL for 'S1')
        tau DOUBLE,                     -- the router's threshold (NULL unless 'router')
        seed INTEGER NOT NULL,
        query_id VARCHAR NOT NULL,
        top_k INTEGER NOT NULL,         -- passages the reader saw
        answer VARCHAR NOT NULL,        -- the reader's answer text
        llm_call_key VARCHAR NOT NULL""",
    # --- orchestration ------------------------------------------------------------------------------
    "stage_manifest": """
        stage VARCHAR NOT NULL,         -- 'ingest' | 'induce' | 'chunk' | 'dbt:conditions' | 'embed' | ...
        scope VARCHAR NOT NULL,         -- what the stage ran over, e.g. the corpus or '<corpus>|<embedder>'
        fingerprint VARCHAR NOT NULL,   -- sha256 of the stage's inputs; unchanged = the stage is skipped
        detail VARCHAR NOT NULL,        -- one-line summary of what the stage did
        seconds DOUBLE NOT NULL,        -- wall time of the last completed run of the stage
        finished_at TIMESTAMP NOT NULL,
        output_digest VARCHAR           -- digest of the stage's output rows when it finished;
                                        -- a stage is skipped only while they still match (NULL: rerun)""",
    # --- identity: which experiment the warehouse holds (warehouse/identity.py) ------------------------
    "experiments": """
        experiment_id INTEGER NOT NULL, -- 1, 2, ... in the order the runs started
        name VARCHAR NOT NULL,          -- the config's name
        study VARCHAR NOT NULL,         -- 'chunking' (arXiv 2610.10170) | 'rewriting' (arXiv 2609.05637)
        config_file VARCHAR NOT NULL,   -- where the config was read from
        config_json VARCHAR NOT NULL,   -- the resolved config (defaults filled in, CLI overrides applied)
        config_hash VARCHAR NOT NULL,   -- sha256 of config_json
        source_json VARCHAR NOT NULL,   -- the YAML mapping as read, CLI overrides applied (re-parsed by `ragwh report`)
        overrides_json VARCHAR NOT NULL,-- the CLI overrides ({"limit": 3, "precision": "fp32"}; {} when none)
        project_version VARCHAR NOT NULL,
        git_commit VARCHAR,             -- HEAD of the checkout ('-dirty' when it had changes); NULL outside git
        packages_json VARCHAR NOT NULL, -- versions of duckdb, dbt-core, dbt-duckdb, torch, sentence-transformers, transformers
        precision VARCHAR NOT NULL,     -- asked for (auto | fp32 | bf16) -> computed on this machine, e.g. 'auto -> bf16'
        device VARCHAR NOT NULL,        -- 'cpu' or 'cuda (<device name>)'
        started_at TIMESTAMP NOT NULL,
        finished_at TIMESTAMP,          -- NULL while running (or when the process was killed)
        status VARCHAR NOT NULL,        -- running | finished | failed | interrupted (its process ended
                                        -- without finishing: killed, or a crash; set by the next run)
        detail VARCHAR,                 -- why it failed; for interrupted, which process and when it was noticed
        pid INTEGER,                    -- the process of the run (NULL: written before pids were recorded)
        host VARCHAR                    -- the machine it ran on""",
    "experiment_settings": """
        name VARCHAR NOT NULL,          -- a key of dbt_project.yml's setting_defaults (macro setting)
        value_json VARCHAR NOT NULL,    -- its value as JSON
        study VARCHAR NOT NULL,         -- the study whose run wrote it
        experiment_id INTEGER NOT NULL  -- experiments.experiment_id of that run""",
    "warehouse_meta": """
        key VARCHAR NOT NULL,           -- 'schema_version'
        value VARCHAR NOT NULL""",
}

#: Version of the layout above. Bump it when a loaded table changes; `ragwh upgrade` brings an older
#: warehouse to it (additive changes) and every other command refuses an older one (warehouse/identity.py).
#: 1: before the warehouse recorded a version (no experiments / experiment_settings / warehouse_meta);
#: 2: the experiment identity tables; 3: labels (slicing a contrast by any label).
SCHEMA_VERSION = 3
#: Tables that describe the warehouse rather than hold loaded data (a run that failed before loading
#: anything leaves no warehouse file even though it wrote them).
BOOKKEEPING = ("experiments", "experiment_settings", "warehouse_meta")


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create every loaded table that does not exist yet, and add declared columns that an older
    warehouse lacks (nullable columns only: existing rows read NULL). Never drops or retypes."""
    for name, columns in TABLES.items():
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns}\n)")
    for name, column, ddl in _nullable_columns():
        con.execute(f"ALTER TABLE {name} ADD COLUMN IF NOT EXISTS {column} {ddl}")


@functools.cache
def _nullable_columns() -> tuple[tuple[str, str, str], ...]:
    """(table, column, SQL type) of every declared column without NOT NULL, in declaration order."""
    con = duckdb.connect()
    try:
        for name, columns in TABLES.items():
            con.execute(f"CREATE TABLE {name} ({columns}\n)")
        return tuple(
            con.execute(
                "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE is_nullable AND NOT internal "
                "AND schema_name = 'main' "
                "ORDER BY table_name, column_index"
            ).fetchall()
        )
    finally:
        con.close()


@functools.cache
def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of a loaded table, derived from its DDL above (so loaders never restate it)."""
    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE {table} ({TABLES[table]}\n)")
        return con.sql(f"SELECT * FROM {table} LIMIT 0").to_arrow_table().schema
    finally:
        con.close()
