"""Every subset x every fusion rule, scored without materializing lists: equal to ranx (fuse, then
evaluate) wherever the order of tied documents cannot change a metric, and to a brute-force sort with the documented tie rule
(score descending, then doc_id) everywhere."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from ranx import Qrels, Run, evaluate

from tests.udfs.fusion.runs import random_runs, ranx_fused
from udfs.ensembles import METRIC_COLUMNS, RULES, ensemble_metrics, ensemble_table, members_of, merge_table
from udfs.fusion.comb_max import comb_max
from udfs.fusion.comb_mnz import comb_mnz
from udfs.fusion.comb_sum import comb_sum
from udfs.fusion.min_max import min_max_norm
from udfs.fusion.registry import fusion_rules
from udfs.fusion.rrf import rrf
from udfs.metrics.doc_level import hit_at_k, mrr_at_k, ndcg_at_k, recall_at_k

RANX = {r.rule: (r.ranx_method, r.ranx_norm) for r in fusion_rules()}  # seeds/fusion_rules.csv
RANX_METRICS = {"hit": "hit_rate@10", "recall": "recall@10", "ndcg": "ndcg@10", "mrr": "mrr@10"}


@pytest.fixture(scope="module")
def case():
    rr = random_runs(7, n_queries=60, n_runs=4)
    relevant = np.array([rr.stack.item_key[i] in rr.qrels[rr.queries[g]] for i, g in enumerate(rr.stack.group_of_item)])
    n_rel = np.array([len(rr.qrels[q]) for q in rr.queries])
    masks = np.arange(1, 16)
    res = ensemble_metrics(rr.stack, relevant, n_rel, np.full(len(rr.queries), 15), masks, chunk_items=97)
    got = {
        (int(r), int(g), int(m)): [res[c][i] for c in METRIC_COLUMNS]
        for i, (r, g, m) in enumerate(zip(res["rule"], res["group"], res["mask"]))
    }
    return rr, got, masks


def _fused(rr, rule, masks):
    members = members_of(masks, 4)
    norm = min_max_norm(rr.stack.scores, rr.stack.offsets)
    return {
        "max": lambda: comb_max(rr.stack.scores, members),
        "rrf": lambda: rrf(rr.stack.ranks, members),
        "combsum": lambda: comb_sum(norm, members),
        "combmnz": lambda: comb_mnz(norm, members),
    }[rule]()


def test_every_group_rule_and_subset_is_scored(case):
    rr, got, masks = case
    assert len(got) == len(RULES) * len(rr.queries) * len(masks)


def test_workers_give_the_same_arrays_in_the_same_order(case):
    rr, _, masks = case
    relevant = np.array([rr.stack.item_key[i] in rr.qrels[rr.queries[g]] for i, g in enumerate(rr.stack.group_of_item)])
    n_rel = np.array([len(rr.qrels[q]) for q in rr.queries])
    cell = np.array([15, 7, 3] * (len(rr.queries) // 3))
    one = ensemble_metrics(rr.stack, relevant, n_rel, cell, masks, chunk_items=97, workers=1)
    for workers in (2, 5):
        many = ensemble_metrics(rr.stack, relevant, n_rel, cell, masks, chunk_items=97, workers=workers)
        assert one.keys() == many.keys()
        for c in one:
            assert one[c].dtype == many[c].dtype and np.array_equal(one[c], many[c]), (workers, c)
    assert len(one["group"]) > 20 * len(RULES)  # several chunks per rule: the order is the tasks' order


@pytest.mark.parametrize("rule", list(RULES))
def test_equals_brute_force_sort_with_doc_id_ties(case, rule):
    rr, got, masks = case
    fused = _fused(rr, rule, masks)
    group = rr.stack.group_of_item
    for j, m in enumerate(masks):
        run_rel, qrels_rel = [], []
        for g, q in enumerate(rr.queries):
            items = [i for i in np.flatnonzero(group == g) if not np.isnan(fused[i, j])]
            order = sorted(items, key=lambda i: (-fused[i, j], rr.stack.item_key[i]))
            run_rel.append([float(rr.stack.item_key[i] in rr.qrels[q]) for i in order])
            qrels_rel.append([1.0] * len(rr.qrels[q]))
        ref = np.column_stack(
            [
                hit_at_k(run_rel, 10),
                recall_at_k(run_rel, qrels_rel, 10),
                ndcg_at_k(run_rel, qrels_rel, 10),
                mrr_at_k(run_rel, 10),
            ]
        )
        ours = np.array([got[(list(RULES).index(rule), g, int(m))] for g in range(len(rr.queries))])
        np.testing.assert_allclose(ours, ref, atol=1e-12)


@pytest.mark.parametrize("rule", list(RULES))
def test_equals_ranx_fuse_then_evaluate_where_untied(case, rule):
    rr, got, masks = case
    method, norm = RANX[rule]
    compared = 0
    for m in (int(x) for x in masks if int(x).bit_count() >= 2):
        fused = ranx_fused(rr, [s for s in range(4) if m >> s & 1], method, norm)
        untied = [q for q in rr.queries if _order_free(fused[q], rr.qrels[q])]
        if not untied:
            continue
        qrels = Qrels({q: rr.qrels[q] for q in untied})
        run = Run({q: fused[q] for q in untied})
        for col, name in RANX_METRICS.items():
            theirs = np.array(list(evaluate(qrels, run, name, return_mean=False)))
            ours = [got[(list(RULES).index(rule), rr.queries.index(q), m)][METRIC_COLUMNS.index(col)] for q in untied]
            np.testing.assert_allclose(ours, theirs, atol=1e-9)
        compared += len(untied)
    assert compared >= 300  # enough lists to make the parity meaningful


def _order_free(fused: dict[str, float], qrels: dict[str, int]) -> bool:
    """Every group of tied scores is all relevant or all irrelevant: the metrics do not depend on how
    ties are ordered, so ranx (unstable sort) and the kernel (doc_id) must agree."""
    classes: dict[float, set[bool]] = {}
    for d, x in fused.items():
        classes.setdefault(x, set()).add(d in qrels)
    return all(len(v) == 1 for v in classes.values())


def test_singletons_reproduce_each_run(case):
    rr, got, _ = case
    for s in range(4):
        run_rel = [[float(d in rr.qrels[q]) for d in rr.runs[s][q]] for q in rr.queries]  # score order
        qrels_rel = [[1.0] * len(rr.qrels[q]) for q in rr.queries]
        ref = hit_at_k(run_rel, 10), ndcg_at_k(run_rel, qrels_rel, 10)
        for r in range(len(RULES)):
            ours = np.array([got[(r, g, 1 << s)] for g in range(len(rr.queries))])
            np.testing.assert_allclose(ours[:, 0], ref[0])
            np.testing.assert_allclose(ours[:, 2], ref[1], atol=1e-12)


def _tables(rr):
    group = rr.stack.group_of_item
    rows = [
        (
            int(g),
            rr.stack.item_key[i],
            s,
            int(rr.stack.ranks[i, s]),
            float(rr.stack.scores[i, s]),
            rr.stack.item_key[i] in rr.qrels[rr.queries[g]],
        )
        for i, g in enumerate(group)
        for s in range(4)
        if rr.stack.ranks[i, s]
    ]
    runs = pa.table(dict(zip(["group_id", "doc_id", "bit", "rank", "score", "relevant"], map(list, zip(*rows)))))
    return runs


def test_table_keeps_only_subsets_inside_the_cell(case):
    rr, got, _ = case
    runs = _tables(rr)
    cell = np.where(np.arange(len(rr.queries)) < 30, 15, 0b0111)  # the second half lacks run 3
    groups = pa.table(
        {
            "group_id": np.arange(len(rr.queries)),
            "n_relevant": [len(rr.qrels[q]) for q in rr.queries],
            "cell_mask": cell,
        }
    )
    out = ensemble_table(runs, groups, np.arange(1, 16), 4)
    assert out.num_rows == len(RULES) * (30 * 15 + 30 * 7)
    late = out.filter(pa.compute.greater_equal(out["group_id"], 30)).to_pydict()
    assert all(m & 0b1000 == 0 for m in late["subset_mask"])
    d = out.to_pydict()
    i = d["subset_mask"].index(0b0101)
    key = (list(RULES).index(str(d["rule"][i])), d["group_id"][i], 0b0101)
    assert [d[c][i] for c in METRIC_COLUMNS] == got[key]


def test_merge_lists_are_the_max_union_top_k(case):
    rr, got, _ = case
    out = merge_table(_tables(rr), len(rr.queries), base_bit=0, helper_bits=[1, 3], n_runs=4, k=10).to_pydict()
    for h in (1, 3):
        for g, q in enumerate(rr.queries):
            union = {}
            for s in (0, h):
                for d, x in rr.runs[s][q].items():
                    union[d] = max(union.get(d, -1.0), x)
            want = sorted(union, key=lambda d: (-union[d], d))[:10]
            mine = [
                (r, d)
                for gg, hb, r, d in zip(out["group_id"], out["helper_bit"], out["rank"], out["doc_id"])
                if gg == g and hb == h
            ]
            assert [d for _, d in sorted(mine)] == want
            hit = float(any(d in rr.qrels[q] for d in want))
            assert got[(0, g, 1 | (1 << h))][0] == hit
