"""Plain-Python recomputations of the rewriting marts from the loaded tables (the test oracle):
loops over queries and lists, ranx for the metrics, no SQL beyond reading the tables."""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations

import numpy as np
from ranx import Qrels, Run, evaluate

from udfs.stats.bootstrap import paired_bootstrap

SOLO = ("S1", "HyDE", "Q2D", "S2", "S3", "S4")  # bit order: the baseline, then by name
METRICS = ("HIT@10", "R@10", "nDCG@10", "MRR@10")
RANX = {"HIT@10": "hit_rate@10", "R@10": "recall@10", "nDCG@10": "ndcg@10", "MRR@10": "mrr@10"}


class Data:
    """The loaded tables as dicts: rankings, qrels, rewrites' calls, answers."""

    def __init__(self, con):
        self.lists: dict[tuple, list[tuple[str, float]]] = defaultdict(list)
        for c, e, r, s, seed, q, rank, d, score in con.execute(
            "select corpus, embedder, reranker, strategy, seed, query_id, rank, doc_id, score from rewrite_runs "
            "order by all"
        ).fetchall():
            self.lists[(c, e, r, s, seed, q)].append((d, score))
        self.qrels: dict[str, set[str]] = defaultdict(set)
        for q, d, rel in con.execute("select query_id, doc_id, relevance from qrels").fetchall():
            if rel >= 1:
                self.qrels[q].add(d)
        self.kind = dict(con.execute("select strategy, kind from rewrite_strategies").fetchall())
        self.calls = defaultdict(set)
        for c, e, s, seed, q, key in con.execute(
            "select corpus, embedder, strategy, seed, query_id, llm_call_key from rewrites "
            "where llm_call_key is not null"
        ).fetchall():
            self.calls[(c, e, s, seed, q)].add(key)
        self.tokens = {
            k: (p, t)
            for k, p, t in con.execute("select cache_key, prompt_tokens, completion_tokens from llm_calls").fetchall()
        }

    def scored(self):
        """Keys of the rankings that are scored: the query has a relevant judgment, no score is NaN."""
        return [k for k, v in self.lists.items() if self.qrels.get(k[5]) and not any(math.isnan(s) for _, s in v)]


def doc_metrics(docs: list[str], relevant: set[str]) -> dict[str, float]:
    """Binary HIT@10, R@10, nDCG@10, MRR@10 of a ranked list (written out, independent of the kernels)."""
    flags = [d in relevant for d in docs[:10]]
    ranks = [i + 1 for i, f in enumerate(flags) if f]
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    return {
        "HIT@10": float(bool(ranks)),
        "R@10": len(ranks) / len(relevant),
        "nDCG@10": sum(1 / math.log2(r + 1) for r in ranks) / idcg,
        "MRR@10": 1 / ranks[0] if ranks else 0.0,
    }


def ranx_metrics(data: Data) -> dict[tuple, float]:
    """(corpus, embedder, reranker, strategy, seed, query, metric) -> value, by ranx evaluate per run."""
    runs = defaultdict(dict)
    for k in data.scored():
        runs[k[:5]][k[5]] = {d: s for d, s in data.lists[k]}
    out = {}
    for run_key, run in runs.items():
        qids = sorted(run)
        qrels = Qrels({q: {d: 1 for d in data.qrels[q]} for q in qids})
        for m, name in RANX.items():
            for q, v in zip(qids, evaluate(qrels, Run({q: run[q] for q in qids}), name, return_mean=False)):
                out[(*run_key, q, m)] = float(v)
    return out


def seed_mean(values: dict[tuple[int, str], float]) -> float:
    """Mean over seeds of the seed's mean over queries; values keyed (seed, query)."""
    by_seed = defaultdict(list)
    for (seed, _), v in values.items():
        by_seed[seed].append(v)
    return float(np.mean([np.mean(v) for v in by_seed.values()]))


def seed_sd(values: dict[tuple[int, str], float]) -> float:
    by_seed = defaultdict(list)
    for (seed, _), v in values.items():
        by_seed[seed].append(v)
    return float(np.std([np.mean(v) for v in by_seed.values()], ddof=1))


def query_means(values: dict[tuple[int, str], float]) -> dict[str, float]:
    by_q = defaultdict(list)
    for (_, q), v in values.items():
        by_q[q].append(v)
    return {q: float(np.mean(v)) for q, v in by_q.items()}


def paired(t: dict[tuple[int, str], float], c: dict[tuple[int, str], float], b: int, seed: int):
    """The study's pairing: per (seed, query) both have, t - c; per query the mean over its seeds; the
    paired bootstrap of their mean over queries in query_id order."""
    deltas = query_means({k: t[k] - c[k] for k in set(t) & set(c)})
    return paired_bootstrap([deltas[q] for q in sorted(deltas)], b, seed)


def fuse(lists: list[list[tuple[str, float]]], rule: str, k: int = 60) -> list[str]:
    """The fused ranking of some runs' lists by rule (max | rrf | combsum | combmnz), ties by doc_id."""
    score: dict[str, float] = {}
    count: dict[str, int] = defaultdict(int)
    for lst in lists:
        if rule in ("combsum", "combmnz"):
            lo, hi = min(s for _, s in lst), max(s for _, s in lst)
            vals = [(d, (s - lo) / max(hi - lo, 1e-9)) for d, s in lst]
        elif rule == "rrf":
            vals = [(d, 1 / (k + i + 1)) for i, (d, _) in enumerate(lst)]
        else:
            vals = lst
        for d, v in vals:
            count[d] += 1
            score[d] = max(score.get(d, -math.inf), v) if rule == "max" else score.get(d, 0.0) + v
    if rule == "combmnz":
        score = {d: v * count[d] for d, v in score.items()}
    return sorted(score, key=lambda d: (-score[d], d))


def subsets(strategies: tuple[str, ...]):
    """Every non-empty subset, as (mask over SOLO bits, members in bit order)."""
    for n in range(1, len(strategies) + 1):
        for combo in combinations(strategies, n):
            yield sum(1 << SOLO.index(s) for s in combo), sorted(combo, key=SOLO.index)


def complete_groups(data: Data) -> dict[tuple, dict[str, list[tuple[str, float]]]]:
    """(corpus, embedder, reranker, seed, query) -> {solo strategy: list} for the complete groups: every
    solo strategy the cell has a scored ranking for has one for this group."""
    scored = [k for k in data.scored() if data.kind.get(k[3]) == "solo"]
    cell_strategies = defaultdict(set)
    groups = defaultdict(dict)
    for k in scored:
        cell_strategies[k[:3]].add(k[3])
        groups[(*k[:3], k[4], k[5])][k[3]] = data.lists[k]
    return {g: v for g, v in groups.items() if set(v) == cell_strategies[g[:3]]}
