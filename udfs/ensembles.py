"""Ensembles of strategies: every subset of the runs of a query group fused by every rule, scored
with the binary document metrics, without materializing any fused list.

For G query groups (one per corpus x embedder x reranker x seed x query) holding S runs (the solo
strategies; bit s of a subset mask = run s) and the M subset masks, every rule of :data:`RULES`
gives an (N, M) matrix of fused scores (:mod:`udfs.fusion`); the rank of each relevant document
inside each fused list (:func:`udfs.fusion.ranking.ranks_of`, ties by doc_id) gives HIT@k, R@k,
nDCG@k and MRR@k (:mod:`udfs.metrics.relevant_ranks`). Groups are processed in chunks of about
``chunk_items`` documents, so memory is O(chunk · M) whatever the number of groups (times ``workers``:
each thread holds one (rule, chunk) piece at a time). A group only gets
rows for the subsets inside its ``cell_mask`` (the strategies its cell has runs for).

Cost per rule: O(N · M) to fuse (each subset extends a smaller one by one run: udfs/fusion/subsets.py)
plus O(T · D · M) to rank (T relevant documents, D documents of the largest group in the chunk); N
documents over all groups. At the paper's scale (22,416 groups, 1.9M documents, 63 subsets, 4 rules)
about 4 CPU-seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa

from udfs.fusion.comb_max import comb_max
from udfs.fusion.min_max import min_max_norm
from udfs.fusion.ranking import ranks_of, top_k
from udfs.fusion.registry import fusion_rules
from udfs.fusion.stack import RunStack, stack_runs
from udfs.metrics.relevant_ranks import metrics_from_ranks

#: rule name -> (what it fuses: 'scores' | 'ranks' | 'normalized', its function), from seeds/fusion_rules.csv
RULES: dict[str, tuple[str, Callable]] = {r.rule: (r.input, r.function()) for r in fusion_rules()}
METRIC_COLUMNS = ("hit", "recall", "ndcg", "mrr")


def members_of(masks: np.ndarray, n_runs: int) -> np.ndarray:
    """(M,) subset bitmasks -> (M, S) boolean membership (bit s = run s)."""
    masks = np.asarray(masks, dtype=np.int64)
    if (masks <= 0).any() or (masks >= 1 << n_runs).any():
        raise ValueError(f"subset masks must lie in 1..{(1 << n_runs) - 1}")
    return ((masks[:, None] >> np.arange(n_runs)[None, :]) & 1).astype(bool)


def ensemble_metrics(
    stack: RunStack,
    relevant: np.ndarray,
    n_relevant: np.ndarray,
    cell_mask: np.ndarray,
    masks: np.ndarray,
    rules: tuple[str, ...] = tuple(RULES),
    k: int = 10,
    rrf_k: int = 60,
    chunk_items: int = 4096,
    workers: int = 1,
) -> dict[str, np.ndarray]:
    """Metrics of every (group, rule, subset) with the subset inside the group's ``cell_mask``, computed
    in (rule, chunk of groups) pieces by ``workers`` threads.

    Returns flat arrays ``group``, ``rule`` (index into ``rules``), ``mask`` and one per metric
    (:data:`METRIC_COLUMNS`), ordered by rule, then group, then subset."""
    n_runs = stack.scores.shape[1]
    members = members_of(masks, n_runs)
    masks = np.asarray(masks, dtype=np.int64)
    relevant = np.asarray(relevant, dtype=bool)
    n_relevant = np.asarray(n_relevant, dtype=np.int64)
    cell_mask = np.asarray(cell_mask, dtype=np.int64)
    unknown = [r for r in rules if r not in RULES]
    if unknown:
        raise ValueError(f"unknown fusion rule(s) {unknown}; known: {sorted(RULES)}")
    inputs = {"scores": stack.scores, "ranks": stack.ranks, "normalized": min_max_norm(stack.scores, stack.offsets)}
    allowed_masks = masks[None, :]
    score_keys = (f"HIT@{k}", f"R@{k}", f"nDCG@{k}", f"MRR@{k}")  # metrics_from_ranks' keys, as METRIC_COLUMNS

    def piece(ri: int, g0: int, g1: int) -> tuple[np.ndarray, ...]:
        what, fn = RULES[rules[ri]]
        a, b = stack.offsets[g0], stack.offsets[g1]
        offsets = stack.offsets[g0 : g1 + 1] - a
        values = inputs[what][a:b]
        fused = fn(values, members, rrf_k) if rules[ri] == "rrf" else fn(values, members)
        targets = np.flatnonzero(relevant[a:b])
        ranks = ranks_of(fused, offsets, targets)
        row = np.searchsorted(offsets, targets, side="right") - 1
        scores = metrics_from_ranks(ranks, row, n_relevant[g0:g1], k)
        gi, mi = np.nonzero((allowed_masks & ~cell_mask[g0:g1, None]) == 0)  # (Gc, M) allowed subsets
        return (
            gi + g0,
            np.full(len(gi), ri, dtype=np.int64),
            masks[mi],
            *(scores[name][gi, mi] for name in score_keys),
        )

    tasks = [(ri, g0, g1) for ri in range(len(rules)) for g0, g1 in _chunks(stack.offsets, chunk_items)]
    # the pieces are independent (NumPy releases the GIL in their array work) and are joined in task
    # order: the same arrays, bit for bit, with any number of workers
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        pieces = list(pool.map(lambda t: piece(*t), tasks))
    out = {c: [p[i] for p in pieces] for i, c in enumerate(("group", "rule", "mask", *METRIC_COLUMNS))}
    return {c: np.concatenate(v) if v else np.zeros(0) for c, v in out.items()}


def _chunks(offsets: np.ndarray, chunk_items: int) -> list[tuple[int, int]]:
    """Consecutive group ranges holding about ``chunk_items`` items each (at least one group)."""
    n_groups = len(offsets) - 1
    bounds, g0 = [], 0
    while g0 < n_groups:
        g1 = int(np.searchsorted(offsets, offsets[g0] + chunk_items, side="right")) - 1
        g1 = min(max(g1, g0 + 1), n_groups)
        bounds.append((g0, g1))
        g0 = g1
    return bounds


def _stack_from(runs: pa.Table, n_groups: int, n_runs: int) -> RunStack:
    col = lambda name: runs.column(name).to_numpy()
    return stack_runs(col("group_id"), runs.column("doc_id"), col("bit"), col("rank"), col("score"), n_groups, n_runs)


def ensemble_table(
    runs: pa.Table, groups: pa.Table, masks: np.ndarray, n_runs: int, k: int = 10, rrf_k: int = 60, workers: int = 1
) -> pa.Table:
    """The dbt model's table: ``runs`` (group_id, doc_id, bit, rank, score, relevant) sorted by
    (group_id, doc_id, bit); ``groups`` (group_id = 0..G-1 in order, n_relevant, cell_mask) ->
    (group_id, rule, subset_mask, hit, recall, ndcg, mrr)."""
    n_groups = groups.num_rows
    if n_groups and not np.array_equal(groups.column("group_id").to_numpy(), np.arange(n_groups)):
        raise ValueError("groups must be numbered 0..G-1 in order")
    stack = _stack_from(runs, n_groups, n_runs)
    relevant = runs.column("relevant").to_numpy(zero_copy_only=False)[stack.first_row].astype(bool)
    res = ensemble_metrics(
        stack,
        relevant,
        groups.column("n_relevant").to_numpy(),
        groups.column("cell_mask").to_numpy(),
        masks,
        k=k,
        rrf_k=rrf_k,
        workers=workers,
    )
    rules = pa.array(list(RULES))
    return pa.table(
        {
            "group_id": pa.array(res["group"].astype(np.int32)),
            "rule": pa.DictionaryArray.from_arrays(pa.array(res["rule"].astype(np.int8)), rules),
            "subset_mask": pa.array(res["mask"].astype(np.int16)),
            **{c: pa.array(res[c]) for c in METRIC_COLUMNS},
        }
    )


def merge_table(
    runs: pa.Table, n_groups: int, base_bit: int, helper_bits: list[int], n_runs: int, k: int = 10
) -> pa.Table:
    """Top-k lists of the max-score union of the base run and each helper (comb_max; ties by doc_id):
    (group_id, helper_bit, rank, doc_id, score), sorted by helper, group, rank."""
    stack = _stack_from(runs, n_groups, n_runs)
    masks = np.array([(1 << base_bit) | (1 << h) for h in helper_bits], dtype=np.int64)
    fused = comb_max(stack.scores, members_of(masks, n_runs)) if len(masks) else np.zeros((len(stack.scores), 0))
    group = stack.group_of_item
    parts = []
    for j, h in enumerate(helper_bits):
        rows, rank = top_k(fused[:, j], stack.offsets, k)
        parts.append((np.full(len(rows), h), group[rows], rank, rows, fused[rows, j]))
    cat = lambda i, dtype: np.concatenate([p[i] for p in parts]).astype(dtype) if parts else np.zeros(0, dtype)
    return pa.table(
        {
            "group_id": pa.array(cat(1, np.int32)),
            "helper_bit": pa.array(cat(0, np.int16)),
            "rank": pa.array(cat(2, np.int32)),
            "doc_id": stack.keys.take(pa.array(cat(3, np.int64))),
            "score": pa.array(cat(4, np.float64)),
        }
    )
