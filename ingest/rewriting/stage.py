"""The rewriting stage: every strategy x seed of one corpus and stack, from texts to merged runs, in one write.

:func:`rewrite_stage` for corpus ``c``, embedder ``e`` and reranker ``r`` (or none):

1. index: the corpus's ``sentence:<T>/<O>`` chunks and their vectors (:mod:`ingest.rewriting.index`);
2. texts: per strategy and seed, the candidates of every query (:mod:`ingest.rewriting.texts`; LLM-free
   strategies are made once and written under every seed);
3. filter: originals and unscreened candidates embedded (queries as queries; HyDE passages per
   ``hyde_encoding``), cosines to the original, verdicts (:mod:`ingest.rewriting.variants`);
4. search: each distinct (vector, rerank text, pool, HNSW graph, K) through the fixed pipeline once
   (:mod:`ingest.rewriting.textrun`). Under ``dense: hnsw`` a run with seed ``s`` searches the graph of
   index seed ``s`` (LLM-free S1 too, so it differs by seed); the control S1-ann4 searches the query in
   each of its ``ann_graphs`` graphs (:func:`ingest.rewriting.ann.graph_seeds`), each a text run with
   its ``ann_seed``, merged in step 5 like a strategy's texts; HyDE with ``hyde_combine: average``
   searches once with the normalized mean of its kept texts' vectors (recorded under ``variant_idx`` 0,
   reranked against the original query). ``K`` is the strategy's ``depth_k`` for a text among several
   and ``max_merged`` for a strategy's only text (S1, HyDE, Query2Doc, a fallback: the fallback is the
   original searched as S1 searches it);
5. merge: per (strategy, seed, query) one text's list in MMR order, or several texts mixed by max
   score, top ``max_merged`` (:mod:`ingest.rewriting.merge`);
6. write: ``rewrites`` (per corpus, embedder), ``rewrite_text_runs`` and ``rewrite_runs`` (per corpus,
   embedder, reranker) and the funnel, replaced in ONE transaction: the run owns its cell, so rows of
   strategies or seeds no longer configured are removed (:func:`_write`). Stale rows: the texts are
   shared by every reranker of (corpus, embedder), so run rows of *another* reranker stay only when the
   texts they searched are still the stored ones; those of a (strategy, seed) no longer listed, or whose
   texts this run changed (prompts, model, sampling, variants, band, encodings: any
   :data:`TEXT_COLUMNS` value of a ``rewrites`` row), are removed whatever reranker computed them, and
   that cell's stage runs again (its output digest, the cell's ``rewrite_runs``, changed).

Funnel (``funnel.stage`` = ``rewrite:<embedder>:<strategy>:<seed>``): ``queries``, ``llm_answers``,
``empty_answer``, ``no_usable_line``, ``unusable_line``, ``beyond_n``, ``generated`` (texts parsed), and
one count per ``rewrites.reason`` (``identical``, ``duplicate``, ``cosine_low``, ``cosine_high``,
``kept``, ``fallback``). ``rewrite_qrels:<embedder>``: ``input`` (judged pairs of the corpus's queries),
``doc_not_indexed`` (the judged document has no chunk in the index: it can never be retrieved), ``kept``.
"""

from __future__ import annotations

import time
from collections import Counter

import duckdb
import numpy as np
import pyarrow as pa

from ingest.chunking.sentence_windows import chunkset_name
from ingest.llm import LLMCache
from ingest.retrieval.embedders import EmbedderSpec, resolve_embedder
from ingest.retrieval.rerank import RerankerSpec, resolve_reranker
from ingest.rewriting.index import RewriteError, load_index
from ingest.rewriting.merge import merge_texts
from ingest.rewriting.settings import RewriteSettings
from ingest.rewriting.strategies import resolve
from ingest.rewriting.tables import Output, rewrites_table, runs_table, text_runs_table
from ingest.rewriting.textrun import CrossEncoderScorer, Search, run_searches
from ingest.rewriting.texts import strategy_texts, strategy_texts_by_seed
from ingest.rewriting.variants import decide
from ingest.rewriting.vectors import Embedder, text_key, text_vectors
from warehouse.db import replace_where, transaction


def rewrite_stage(
    con: duckdb.DuckDBPyConnection,
    corpus: str,
    settings: RewriteSettings | None = None,
    *,
    embedder: str | EmbedderSpec | None = None,
    reranker: str | RerankerSpec | None = None,
    llm: LLMCache | None = None,
    embed_model=None,
    rerank_model=None,
    show_progress: bool = True,
    engine=None,
) -> dict:
    """Run every configured strategy and seed on ``corpus`` (module doc); returns counts and seconds per step.

    ``embed_model`` / ``rerank_model`` (loaded models) skip loading; otherwise a model is loaded only when
    something is missing (a rerun over stored vectors loads no embedder). ``engine``: None runs the models here;
    a :class:`ingest.retrieval.ray_engine.RaySettings` embeds the missing texts and scores the cross-encoder pairs
    as Ray Data jobs (the same rows; the LLM's engine is its backend's, :mod:`ingest.llm.ray_generate`)."""
    settings = settings or RewriteSettings()
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    strategies = resolve(list(settings.strategies))
    spec = resolve_embedder(embedder)
    emb = Embedder(
        spec,
        load=lambda: embed_model if embed_model is not None else spec.load(),
        engine=engine if embed_model is None else None,
    )
    rr = resolve_reranker(reranker) if reranker is not None else None
    rr_name = rr.name if rr is not None else "none"
    scorer = (
        None
        if rr is None
        else CrossEncoderScorer(
            lambda: rerank_model if rerank_model is not None else rr.load(),
            show_progress=show_progress,
            spec=rr,
            engine=engine if rerank_model is None else None,
        )
    )
    queries = con.execute("SELECT query_id, text FROM queries WHERE corpus = ? ORDER BY query_id", [corpus]).fetchall()
    if not queries:
        raise RewriteError(f"corpus {corpus!r} has no queries: load it first (`ragwh ingest ...`)")
    index = load_index(
        con,
        corpus,
        chunkset_name(settings.chunk_tokens, settings.chunk_overlap),
        emb,
        show_progress,
        ann=settings.ann() if settings.dense == "hnsw" or any(s.form == "ann" for s in strategies) else None,
        keep_texts=scorer is not None,  # only a cross-encoder reads chunk texts after embedding
        build_workers=settings.ann_build_workers or None,
    )
    seconds["embed_chunks"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    texts = {}
    for s in strategies:
        if s.uses_llm:  # every seed's requests in one call: a local backend fills its batches across seeds
            texts.update(
                {
                    (s.name, seed): t
                    for seed, t in strategy_texts_by_seed(s, queries, settings.seeds, settings, llm).items()
                }
            )
        else:
            shared = strategy_texts(s, queries, settings.seeds[0], settings, llm)
            texts.update({(s.name, seed): shared for seed in settings.seeds})
    seconds["llm"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    vectors = _filter(con, emb, strategies, texts, settings, show_progress)
    seconds["embed_texts"] = time.perf_counter() - t0

    searches, outputs, search_vectors = _plan(strategies, texts, settings, vectors)
    runs, step_seconds = run_searches(
        index,
        searches,
        search_vectors,
        scorer=scorer,
        lam=settings.mmr_lambda,
        unit=settings.mmr_unit,
        ann=settings.ann(),
        recall_check=settings.ann_recall_check,
        fill=settings.pool_fill,
    )
    seconds.update(step_seconds)

    t0 = time.perf_counter()
    merged = _merge(runs, outputs, index, settings.max_merged)
    rewrites = rewrites_table(
        corpus,
        spec.name,
        [(qt.query_id, name, seed, c) for (name, seed), qts in texts.items() for qt in qts for c in qt.candidates],
    )
    by_strategy: dict[str, list] = {}
    for o in outputs:
        by_strategy.setdefault(o.strategy, []).append(o)
    # built one strategy at a time inside the write, so at most one strategy's rows are in memory
    text_runs = (text_runs_table(corpus, spec.name, rr_name, index, runs, group) for group in by_strategy.values())
    merged_runs = runs_table(corpus, spec.name, rr_name, merged)
    funnel = _funnel(con, corpus, spec.name, texts, index)
    keys = [(name, seed) for name, seed in texts]
    n_text_runs = _write(con, corpus, spec.name, rr_name, keys, rewrites, text_runs, merged_runs, funnel)
    seconds["merge_write"] = time.perf_counter() - t0
    return {
        "corpus": corpus,
        "embedder": spec.name,
        "reranker": rr_name,
        "queries": len(queries),
        "chunks": len(index.chunk_ids),
        "strategies": [s.name for s in strategies],
        "seeds": list(settings.seeds),
        "llm_calls": llm.calls if llm is not None else 0,
        "llm_cached": llm.hits if llm is not None else 0,
        "texts_embedded": emb.encoded,
        "searches": len(searches),
        "pairs_scored": scorer.pairs_scored if scorer is not None else 0,
        "rewrites": rewrites.num_rows,
        "rewrite_text_runs": n_text_runs,
        "rewrite_runs": merged_runs.num_rows,
        "funnel": _funnel_summary(funnel),
        "seconds": seconds,
    }


def _filter(
    con, emb: Embedder, strategies, texts, settings: RewriteSettings, show_progress: bool
) -> dict[str, np.ndarray]:
    """Embed what the filter needs, set cosines and verdicts; returns key -> vector."""
    items: dict[str, tuple[str, bool]] = {}
    for qts in texts.values():
        for qt in qts:
            for c in qt.candidates:
                if c.reason is None or c.variant_idx == 0:
                    items.setdefault(text_key(c.text, c.encode_as == "query"), (c.text, c.encode_as == "query"))
    keys = list(items)
    matrix, _ = text_vectors(
        con,
        emb,
        [items[k][0] for k in keys],
        [items[k][1] for k in keys],
        label="embedding queries and variants",
        show_progress=show_progress,
    )
    vectors = dict(zip(keys, matrix))
    by_name = {s.name: s for s in strategies}
    for (name, _), qts in texts.items():
        s = by_name[name]
        for qt in qts:
            original = qt.candidates[0]
            q = vectors[text_key(original.text, True)]
            original.cosine = float(q @ q)
            for c in qt.candidates[1:]:
                if c.reason is None:
                    c.cosine = float(vectors[text_key(c.text, c.encode_as == "query")] @ q)
            if s.uses_llm:
                alongside = s.form == "questions" or (s.form == "passage" and settings.hyde_combine == "average")
                decide(
                    qt.candidates,
                    filtered=name in settings.cosine_filter,
                    band=settings.cosine_band,
                    include_original=settings.include_original,
                    original_searched_alongside=alongside,
                )
    return vectors


def _plan(strategies, texts, settings: RewriteSettings, vectors: dict[str, np.ndarray]):
    """Distinct searches, one output per searched text, and the searches' vectors."""
    by_name = {s.name: s for s in strategies}
    search_of: dict[Search, int] = {}
    search_vectors: list[np.ndarray] = []
    outputs: list[Output] = []

    def add(search: Search, vector: np.ndarray) -> int:
        if search not in search_of:
            search_of[search] = len(search_vectors)
            search_vectors.append(vector)
        return search_of[search]

    for (name, seed), qts in texts.items():
        s = by_name[name]
        pool = s.pool or settings.pool
        graphs = settings.index_seeds(s.form, seed)
        for qt in qts:
            kept = [c for c in qt.candidates if c.kept]
            original = qt.candidates[0].text
            if s.form == "passage" and settings.hyde_combine == "average" and len(kept) > 1:
                ks = tuple(sorted(text_key(c.text, c.encode_as == "query") for c in kept))
                mean = np.mean([vectors[k] for k in ks], axis=0)
                mean = mean / (np.linalg.norm(mean) or 1.0)
                depth = settings.max_merged if len(graphs) == 1 else s.depth_k
                for graph in graphs:
                    run = add(Search(("mean", *ks), original, pool, graph, depth), mean.astype(np.float32))
                    outputs.append(Output(name, seed, qt.query_id, 0, run, depth, pool, graph))
                continue
            # a list that is its strategy's only text keeps max_merged documents in MMR order (merge.py)
            depth = settings.max_merged if len(kept) * len(graphs) == 1 else s.depth_k
            for c in kept:
                k = text_key(c.text, c.encode_as == "query")
                rerank_text = c.text if settings.rerank_with == "text" else original
                for graph in graphs:
                    run = add(Search((k,), rerank_text, pool, graph, depth), vectors[k])
                    outputs.append(Output(name, seed, qt.query_id, c.variant_idx, run, depth, pool, graph))
    matrix = np.vstack(search_vectors).astype(np.float32) if search_vectors else np.zeros((0, 0), np.float32)
    return list(search_of), outputs, matrix


def _merge(runs, outputs: list[Output], index, limit: int):
    groups: dict[tuple[str, int, str], list[tuple[int, list[str], list[float]]]] = {}
    for o in outputs:
        run = runs[o.run]
        docs = index.doc_ids[run.mmr_pos[: o.depth_k]].tolist()
        groups.setdefault((o.strategy, o.seed, o.query_id), []).append(
            (o.variant_idx, docs, run.mmr_score[: o.depth_k].tolist())
        )
    return [
        (strategy, seed, query_id, merge_texts(lists, limit)) for (strategy, seed, query_id), lists in groups.items()
    ]


def _funnel(con, corpus: str, embedder: str, texts, index) -> pa.Table:
    rows: list[tuple[str, str, int]] = []
    for (name, seed), qts in texts.items():
        counts: Counter = Counter({"queries": len(qts)})
        for qt in qts:
            counts.update(qt.counts)
            counts["generated"] += len(qt.candidates) - 1
            counts.update(c.reason for c in qt.candidates if c.variant_idx > 0 or c.reason == "fallback")
        rows += [(f"rewrite:{embedder}:{name}:{seed}", reason, n) for reason, n in counts.items()]
    indexed = set(index.documents.tolist())
    judged = con.execute(
        "SELECT r.doc_id FROM qrels r JOIN queries q USING (query_id) WHERE q.corpus = ?", [corpus]
    ).fetchall()
    missing = sum(1 for (d,) in judged if d not in indexed)
    rows += [
        (f"rewrite_qrels:{embedder}", reason, n)
        for reason, n in (("input", len(judged)), ("doc_not_indexed", missing), ("kept", len(judged) - missing))
    ]
    return pa.table(
        {
            "corpus": [corpus] * len(rows),
            "stage": [r[0] for r in rows],
            "reason": [r[1] for r in rows],
            "n": pa.array([r[2] for r in rows], pa.int64()),
        }
    )


def _funnel_summary(funnel: pa.Table) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for stage, reason, n in zip(*(funnel.column(c).to_pylist() for c in ("stage", "reason", "n"))):
        out.setdefault(stage, {})[reason] = n
    return out


#: the columns of a ``rewrites`` row that decide what a run searched (its text, whether it is searched, its
#: cosine to the original); ``llm_call_key`` is provenance only: the same text from another call searches the same
TEXT_COLUMNS = ("strategy", "seed", "query_id", "variant_idx", "text", "cosine", "kept", "reason")


def _write(con, corpus, embedder, reranker, keys, rewrites, text_runs, merged_runs, funnel) -> int:
    """Replace the cell's rows in one transaction; ``text_runs`` yields the per-text rows in parts. Returns
    the number of per-text rows written.

    A run owns its corpus x stack cell: every ``rewrites`` row of (corpus, embedder), every run row of
    (corpus, embedder, reranker) and every ``rewrite:<embedder>:`` funnel stage of the corpus is replaced,
    so strategies and seeds the config no longer lists leave the tables (and the marts). The texts are
    shared by every reranker of (corpus, embedder), so run rows of another reranker are kept exactly when
    the texts they searched are still the stored ones: those of a (strategy, seed) this run does not list
    are removed (their texts are gone), and so are those of a (strategy, seed) whose texts this run
    changed (any row of :data:`TEXT_COLUMNS` differs: new prompts, model, sampling, variants, cosine
    band, encodings), whatever reranker computed them. That other reranker's stage then runs again
    (its output digest changed) over the new texts."""
    pairs = pa.table({"strategy": [k[0] for k in keys], "seed": pa.array([k[1] for k in keys], pa.int32())})
    stages = pa.table({"stage": sorted(set(funnel.column("stage").to_pylist()))})
    con.register("_rewrite_keys", pairs)
    con.register("_rewrite_funnel_stages", stages)
    con.register("_rewrite_new", rewrites.select(list(TEXT_COLUMNS)))
    cols = ", ".join(TEXT_COLUMNS)
    old = f"SELECT {cols} FROM rewrites WHERE corpus = ? AND embedder = ?"
    stale = (
        f"SELECT DISTINCT strategy, seed FROM (({old} EXCEPT ALL SELECT {cols} FROM _rewrite_new) "
        f"UNION ALL (SELECT {cols} FROM _rewrite_new EXCEPT ALL {old}))"
    )
    orphan = (
        "corpus = ? AND embedder = ? AND ((strategy, seed) NOT IN (SELECT (strategy, seed) FROM _rewrite_keys) "
        "OR (strategy, seed) IN (SELECT (strategy, seed) FROM _rewrite_stale))"
    )
    try:
        with transaction(con):
            changed = con.execute(stale, [corpus, embedder, corpus, embedder]).fetchall()
            con.register(
                "_rewrite_stale",
                pa.table(
                    {
                        "strategy": pa.array([c[0] for c in changed], pa.string()),
                        "seed": pa.array([c[1] for c in changed], pa.int32()),
                    }
                ),
            )
            for table in ("rewrite_text_runs", "rewrite_runs"):
                replace_where(con, table, orphan, [corpus, embedder], None)
                replace_where(
                    con, table, "corpus = ? AND embedder = ? AND reranker = ?", [corpus, embedder, reranker], None
                )
            replace_where(con, "rewrites", "corpus = ? AND embedder = ?", [corpus, embedder], rewrites)
            n = sum(replace_where(con, "rewrite_text_runs", "FALSE", [], part) for part in text_runs)
            replace_where(con, "rewrite_runs", "FALSE", [], merged_runs)
            replace_where(
                con,
                "funnel",
                "corpus = ? AND (starts_with(stage, ?) OR stage IN (SELECT stage FROM _rewrite_funnel_stages))",
                [corpus, f"rewrite:{embedder}:"],
                funnel,
            )
    finally:
        for name in ("_rewrite_keys", "_rewrite_funnel_stages", "_rewrite_new", "_rewrite_stale"):
            con.unregister(name)  # unregistering a name never registered is a no-op
    return n
