"""Synthetic warehouse for the query-rewriting marts: corpora judged by qrels, the merged runs of the
six solo strategies and the two budget controls under three seeds, the strategies' texts with their
LLM calls and token counts, gold answers and reader answers, generated vectorized from one seed.

Used by ``benchmarks/bench_rewriting_marts.py`` at the paper's scale (3 datasets of 5,000 / 2,002 / 470
queries x 3 seeds x 6 strategies + 2 controls, top-20 lists: 3.6M run rows) and by
``tests/models/rewriting/`` at toy scale. The runs are random but structured the way the study's
are: every query has a pool of candidate documents (its relevant ones among them) whose base score
all strategies share, so their lists overlap; a latent per-query difficulty makes misses correlated
across strategies; a per-(strategy, query) aptitude makes them fail on different queries (what
ensembles and routers exploit); a strategy's ``quality`` shifts its relevant documents up. The
baseline S1 and the controls do not depend on the seed (their rows repeat under each seed, as part 1
writes them); the LLM strategies draw fresh noise per seed. Scores are sigmoids (a cross-encoder's
range), so the router's tau grid 0.50..0.80 cuts through them.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from warehouse.db import replace_where, transaction

#: strategy -> (quality, variants per LLM answer (0 = no LLM), mean prompt tokens, mean completion tokens)
STRATEGIES = {
    "S1": (0.00, 0, 0, 0), "S2": (0.05, 4, 180, 90), "S3": (-0.05, 4, 160, 80), "S4": (-0.10, 1, 150, 30),
    "HyDE": (0.02, 1, 140, 160), "Q2D": (0.10, 1, 150, 170),
    "S1-pool100": (0.04, 0, 0, 0), "S1-ann4": (0.02, 0, 0, 0),
}
SOLO = ("S1", "S2", "S3", "S4", "HyDE", "Q2D")


def _depth_k() -> dict[str, int]:
    """Documents each text of a strategy keeps after rerank + MMR (the one place: the strategies seed)."""
    with open(Path(__file__).resolve().parent.parent / "seeds" / "rewrite_strategies.csv", encoding="utf-8") as f:
        return {r["strategy"]: int(r["depth_k"]) for r in csv.DictReader(f)}


DEPTH_K = _depth_k()
SEEDS = (42, 123, 2024)


@dataclass(frozen=True)
class Scale:
    corpora: tuple[tuple[str, int], ...] = (("hotpotqa", 5000), ("ambignq", 2002), ("enterprise", 470))
    embedder: str = "BAAI/bge-base-en-v1.5"
    reranker: str = "BAAI/bge-reranker-base"
    k: int = 20                      # documents per merged list
    pool: int = 60                   # candidate documents per query
    docs_per_query: int = 8          # corpus size = queries x this
    strategies: tuple[str, ...] = tuple(STRATEGIES)
    reader_helper: str | None = "Q2D"  # reader answers for S1, always-merge and the router (None: no answers)
    reader_tau: float = 0.65


def load_synthetic(con: duckdb.DuckDBPyConnection, scale: Scale = Scale(), seed: int = 11,
                   replace: bool = True) -> dict[str, int]:
    """Write the synthetic tables into ``con`` (one transaction; ``replace=False`` appends, e.g. a
    second stack with other corpus names); returns row counts."""
    rng = np.random.default_rng(seed)
    parts: dict[str, list[pa.Table]] = {}
    for corpus, n_q in scale.corpora:
        for name, table in _corpus(rng, scale, corpus, n_q).items():
            parts.setdefault(name, []).append(table)
    tables = {name: pa.concat_tables(ts) for name, ts in parts.items()}
    with transaction(con):
        for name, table in tables.items():
            replace_where(con, name, "true" if replace else "false", [], table)
    return {name: t.num_rows for name, t in tables.items()}


def _corpus(rng: np.random.Generator, scale: Scale, corpus: str, n_q: int) -> dict[str, pa.Table]:
    n_docs = n_q * scale.docs_per_query
    doc_ids = np.array([f"{corpus}/d{i:06d}" for i in range(n_docs)], dtype=object)
    q_ids = np.array([f"{corpus}/q{i:05d}" for i in range(n_q)], dtype=object)
    # candidates of query q: a stride walk over the corpus (distinct: the stride 7919 is prime and
    # pool * 7919 wraps without repeating for corpora that are not multiples of it); the first n_rel are relevant
    cand = (np.arange(n_q)[:, None] * scale.docs_per_query + np.arange(scale.pool)[None, :] * 7919) % n_docs
    n_rel = rng.choice([1, 2, 2, 2, 3], n_q)
    relevant = np.arange(scale.pool)[None, :] < n_rel[:, None]
    difficulty = rng.normal(0, 1, n_q)
    base = rng.normal(0, 1, (n_q, scale.pool))
    documents = pa.table({"doc_id": doc_ids, "corpus": [corpus] * n_docs, "title": [f"Doc {i}" for i in range(n_docs)],
                          "text": [f"Doc {i}\n\nsynthetic passage {i} of {corpus}" for i in range(n_docs)],
                          "topic_bucket": pa.nulls(n_docs, pa.string()), "split": ["train"] * n_docs,
                          "source_file": ["synthetic"] * n_docs})
    queries = pa.table({"query_id": q_ids, "doc_id": pa.nulls(n_q, pa.string()), "corpus": [corpus] * n_q,
                        "text": [f"synthetic question {i}" for i in range(n_q)],
                        "query_type": np.where(np.arange(n_q) % 3 == 0, "comparison", "bridge").astype(object)})
    qr_q, qr_j = np.nonzero(relevant)
    qrels = pa.table({"query_id": q_ids[qr_q], "doc_id": doc_ids[cand[qr_q, qr_j]], "relevance": np.ones(len(qr_q), np.int32)})
    runs, text_runs, rewrites, calls, lists = [], [], [], [], {}
    for strategy in scale.strategies:
        quality, n_var, p_tok, c_tok = STRATEGIES[strategy]
        aptitude = rng.normal(0, 1, n_q)
        fixed_noise = rng.normal(0, 1, (n_q, scale.pool))
        for seed in SEEDS:
            noise = fixed_noise if n_var == 0 else rng.normal(0, 1, (n_q, scale.pool))
            signal = 0.7 * base + 0.5 * noise + relevant * (1.6 + quality - 0.8 * difficulty[:, None] + 0.6 * aptitude[:, None])
            top = np.argsort(-signal, axis=1, kind="stable")[:, :scale.k]
            score = 1.0 / (1.0 + np.exp(-(1.3 * np.take_along_axis(signal, top, axis=1) - 2.2)))
            lists[(strategy, seed)] = (top, score)
            texts = _texts(rng, scale, corpus, q_ids, strategy, seed, n_var)
            rewrites.append(texts)
            # lineage as part 1 writes it: each merged document comes from one kept text, whose MMR list
            # holds it; a text keeps at most depth_k documents, so a list has min(k, depth_k x kept texts)
            kept = texts.column("kept").to_numpy(zero_copy_only=False).reshape(n_q, n_var + 1)
            depth = DEPTH_K[strategy]
            labels = np.repeat(np.arange(n_var + 1), depth)
            slots = np.where(kept[:, labels], rng.random((n_q, len(labels))), 2.0)
            width = min(scale.k, len(labels))
            order = np.argsort(slots, axis=1, kind="stable")[:, :width]
            valid = np.take_along_axis(slots, order, axis=1) < 2.0
            q_row, r_col = np.nonzero(valid)
            run = {
                "corpus": [corpus] * len(q_row), "embedder": [scale.embedder] * len(q_row),
                "reranker": [scale.reranker] * len(q_row), "strategy": [strategy] * len(q_row),
                "seed": np.full(len(q_row), seed, np.int32), "query_id": q_ids[q_row],
                "rank": (r_col + 1).astype(np.int32),
                "doc_id": doc_ids[np.take_along_axis(cand, top, axis=1)[q_row, r_col]],
                "score": score[q_row, r_col],
                "variant_idx": labels[order[q_row, r_col]].astype(np.int32)}
            runs.append(pa.table(run))
            text_runs.append(_mmr_lists(run, n_var + 1))
            if n_var:
                calls.append(_calls(rng, corpus, q_ids, strategy, seed, p_tok, c_tok))
    out = {"documents": documents, "queries": queries, "qrels": qrels, "rewrite_runs": pa.concat_tables(runs),
           "rewrite_text_runs": pa.concat_tables(text_runs), "rewrites": pa.concat_tables(rewrites)}
    if calls:
        out["llm_calls"] = pa.concat_tables(calls)
    if scale.reader_helper and scale.reader_helper in scale.strategies and "S1" in scale.strategies:
        out["query_answers"], out["reader_answers"] = _answers(rng, scale, corpus, q_ids, cand, relevant, lists)
    return out


def _mmr_lists(run: dict, per: int) -> pa.Table:
    """The per-text MMR lists behind a merged list: each merged document in the list of the text that
    gave it its score, with that score, ranked within (query, text) in merged order (scores fall)."""
    rows = len(run["doc_id"])
    query = np.unique(run["query_id"], return_inverse=True)[1]
    text = query * per + run["variant_idx"]
    order = np.lexsort((run["rank"], text))
    start = np.r_[0, np.flatnonzero(np.diff(text[order])) + 1]
    within = np.arange(rows) - np.repeat(start, np.diff(np.r_[start, rows]))
    rank = np.empty(rows, np.int32)
    rank[order] = within + 1
    return pa.table({
        "corpus": run["corpus"], "embedder": run["embedder"], "reranker": run["reranker"],
        "pool": np.full(rows, 20, np.int32), "strategy": run["strategy"], "seed": run["seed"],
        "query_id": run["query_id"], "variant_idx": run["variant_idx"], "stage": ["mmr"] * rows,
        "rank": rank.ravel(), "chunk_id": [f"sentence:512/50|{d}|0" for d in run["doc_id"]],
        "doc_id": run["doc_id"], "score": run["score"]})


def _key(corpus: str, strategy: str, seed: int, q_ids: np.ndarray) -> np.ndarray:
    return np.array([f"synthetic|{strategy}|{seed}|{q}" for q in q_ids], dtype=object)


def _texts(rng, scale: Scale, corpus: str, q_ids: np.ndarray, strategy: str, seed: int, n_var: int) -> pa.Table:
    """variant 0 = the original; then n_var LLM texts from one call, each kept or filtered by cosine."""
    n_q = len(q_ids)
    per = n_var + 1
    q = np.repeat(np.arange(n_q), per)
    v = np.tile(np.arange(per), n_q).astype(np.int32)
    cosine = np.where(v == 0, 1.0, rng.uniform(0.3, 0.95, len(q)))
    reason = np.where(v == 0, "original", np.where(cosine < 0.4, "cosine_low", np.where(cosine > 0.9, "cosine_high", "kept")))
    keys = _key(corpus, strategy, seed, q_ids)[q]
    return pa.table({"corpus": [corpus] * len(q), "embedder": [scale.embedder] * len(q), "query_id": q_ids[q],
                     "strategy": [strategy] * len(q), "seed": np.full(len(q), seed, np.int32), "variant_idx": v,
                     "text": [f"text {i}" for i in range(len(q))], "cosine": cosine,
                     "kept": np.isin(reason, ["original", "kept"]), "reason": reason.astype(object),
                     "llm_call_key": pa.array(np.where(v == 0, None, keys), type=pa.string())})


def _calls(rng, corpus: str, q_ids: np.ndarray, strategy: str, seed: int, p_tok: int, c_tok: int) -> pa.Table:
    n_q = len(q_ids)
    return pa.table({"cache_key": _key(corpus, strategy, seed, q_ids), "model": ["synthetic"] * n_q,
                     "prompt_name": [strategy] * n_q, "prompt_version": ["v1"] * n_q, "item_id": q_ids,
                     "request_json": ["{}"] * n_q, "response_text": ["synthetic"] * n_q, "backend": ["synthetic"] * n_q,
                     "created_at": pa.array([datetime(2026, 1, 1)] * n_q, type=pa.timestamp("us")),
                     "prompt_tokens": rng.poisson(p_tok, n_q).astype(np.int32),
                     "completion_tokens": rng.poisson(c_tok, n_q).astype(np.int32)})


def _answers(rng, scale: Scale, corpus: str, q_ids, cand, relevant, lists) -> tuple[pa.Table, pa.Table]:
    """Gold answers (1-2 aliases) and reader answers for S1, always-merge and the router at reader_tau:
    right (an alias), partly right (extra words: F1 < 1) or wrong, more often right when the
    passages the reader sees (top 5) hold a relevant document."""
    n_q = len(q_ids)
    n_alias = rng.integers(1, 3, n_q)
    aq = np.repeat(np.arange(n_q), n_alias)
    idx = (np.arange(len(aq)) - np.repeat(np.cumsum(n_alias) - n_alias, n_alias)).astype(np.int32)
    gold = pa.table({"query_id": q_ids[aq], "answer_idx": idx,
                     "answer": [f"The answer {q}" if i == 0 else f"answer-{q}!" for q, i in zip(aq, idx)]})
    rows = []
    for seed in SEEDS:
        s1_top, s1_score = lists[("S1", seed)]
        h_top, _ = lists[(scale.reader_helper, seed)]
        hit_s1 = np.take_along_axis(relevant, s1_top[:, :5], axis=1).any(axis=1)
        hit_h = np.take_along_axis(relevant, h_top[:, :5], axis=1).any(axis=1)
        expanded = s1_score[:, 0] < scale.reader_tau
        for setting, helper, tau, hit in (("S1", None, None, hit_s1), ("always-merge", scale.reader_helper, None, hit_s1 | hit_h),
                                          ("router", scale.reader_helper, scale.reader_tau, np.where(expanded, hit_s1 | hit_h, hit_s1))):
            u = rng.random(n_q)
            p_right = np.where(hit, 0.6, 0.2)
            answer = np.where(u < p_right, [f"answer {q}" for q in range(n_q)],
                              np.where(u < p_right + 0.15, [f"the answer {q} in a sentence" for q in range(n_q)],
                                       [f"something else {q}" for q in range(n_q)]))
            rows.append(pa.table({"corpus": [corpus] * n_q, "embedder": [scale.embedder] * n_q,
                                  "reranker": [scale.reranker] * n_q, "setting": [setting] * n_q,
                                  "helper": pa.array([helper] * n_q, type=pa.string()),
                                  "tau": pa.array([tau] * n_q, type=pa.float64()), "seed": np.full(n_q, seed, np.int32),
                                  "query_id": q_ids, "top_k": np.full(n_q, 5, np.int32), "answer": answer.astype(object),
                                  "llm_call_key": [f"reader|{setting}|{seed}|{q}" for q in q_ids]}))
    return gold, pa.concat_tables(rows)
