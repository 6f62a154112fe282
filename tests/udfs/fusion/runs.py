"""Random runs for the fusion tests: the same runs as a dense stack and as ranx Runs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ranx import Run, fuse

from udfs.fusion.stack import RunStack, stack_runs


@dataclass
class RandomRuns:
    stack: RunStack
    runs: list[dict[str, dict[str, float]]]  # per run: {query: {doc: score}}
    qrels: dict[str, dict[str, int]]
    queries: list[str]


def random_runs(seed: int, n_queries: int = 40, n_runs: int = 4, n_docs: int = 40, max_len: int = 20) -> RandomRuns:
    """Every run lists 1..max_len distinct documents per query with distinct decreasing scores in
    (0, 1); rank = position by score. Qrels: 1-3 relevant documents per query."""
    rng = np.random.default_rng(seed)
    rows, runs, qrels = [], [{} for _ in range(n_runs)], {}
    queries = [f"q{q:03d}" for q in range(n_queries)]
    for q, qid in enumerate(queries):
        qrels[qid] = {f"d{d:02d}": 1 for d in rng.choice(n_docs, int(rng.integers(1, 4)), replace=False)}
        for s in range(n_runs):
            n = int(rng.integers(1, max_len + 1))
            docs = rng.choice(n_docs, n, replace=False)
            scores = np.sort(rng.random(n))[::-1]
            runs[s][qid] = {f"d{d:02d}": float(x) for d, x in zip(docs, scores)}
            rows += [(q, f"d{d:02d}", s, i + 1, float(x)) for i, (d, x) in enumerate(zip(docs, scores))]
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    g, key, run, rank, score = (np.array(c) for c in zip(*rows))
    return RandomRuns(stack_runs(g, key.astype(object), run, rank, score, n_queries, n_runs), runs, qrels, queries)


def ranx_fused(rr: RandomRuns, members: list[int], method: str, norm: str | None) -> dict[str, dict[str, float]]:
    params = {"k": 60} if method == "rrf" else None
    return fuse([Run(rr.runs[s]) for s in members], norm=norm, method=method, params=params).to_dict()


def assert_equals_ranx(rr: RandomRuns, fused: np.ndarray, masks: list[int], method: str, norm: str | None) -> None:
    """Our (N, M) fused scores equal ranx's fused run for every subset of >= 2 runs: the same
    documents per query (NaN = absent) and the same scores to 1e-12."""
    group = rr.stack.group_of_item
    n_runs = len(rr.runs)
    for j, mask in enumerate(masks):
        theirs = ranx_fused(rr, [s for s in range(n_runs) if mask >> s & 1], method, norm)
        ours: dict[str, dict[str, float]] = {q: {} for q in rr.queries}
        for i in np.flatnonzero(~np.isnan(fused[:, j])):
            ours[rr.queries[group[i]]][rr.stack.item_key[i]] = fused[i, j]
        for q in rr.queries:
            assert set(ours[q]) == set(theirs[q]), (method, mask, q)
            np.testing.assert_allclose(
                [ours[q][d] for d in sorted(ours[q])], [theirs[q][d] for d in sorted(ours[q])], rtol=0, atol=1e-12
            )


def pair_masks(n_runs: int) -> list[int]:
    """Every subset of >= 2 runs (ranx fuse needs two)."""
    return [m for m in range(1, 1 << n_runs) if m.bit_count() >= 2]
