"""Points 5-6: every subset x fusion rule scored per group equals a brute-force fusion (ties by doc_id)
and ranx fuse + evaluate (where tie order cannot matter); the ensemble mart's means, deltas against
the best solo strategy, bootstrap and Holm; the budget controls' share of the best ensemble's gain,
and 'not_run' rows where the control runs are missing."""
from __future__ import annotations

from collections import defaultdict

import pytest
from ranx import Qrels, Run, evaluate, fuse

from tests.models.rewriting.conftest import SEED, B
from tests.models.rewriting.reference import (
    METRICS,
    RANX,
    SOLO,
    Data,
    complete_groups,
    doc_metrics,
    paired,
    seed_mean,
    seed_sd,
    subsets,
)
from tests.models.rewriting.reference import fuse as ref_fuse
from udfs.multiple import holm  # = statsmodels multipletests(method="holm"): tests/udfs/test_statistics.py

RULES = ("max", "rrf", "combsum", "combmnz")
RANX_RULE = {"max": ("max", None), "rrf": ("rrf", "min-max"), "combsum": ("sum", "min-max"), "combmnz": ("mnz", "min-max")}


@pytest.fixture(scope="module")
def ref(db):
    data = Data(db)
    groups = complete_groups(data)
    ids = {tuple(r[1:]): r[0] for r in db.execute(
        "select group_id, corpus, embedder, reranker, seed, query_id from int_rewrite_groups where complete").fetchall()}
    scores = {}
    for g, lists in groups.items():
        strategies = tuple(s for s in SOLO if s in lists)
        for mask, members in subsets(strategies):
            for rule in RULES:
                ranked = ref_fuse([lists[s] for s in members], rule)
                scores[(g, rule, mask)] = doc_metrics(ranked, data.qrels[g[4]])
    got = {}
    for gid, rule, mask, *values in db.execute(
            "select group_id, rule, subset_mask, hit, recall, ndcg, mrr from int_rewrite_ensemble_scores").fetchall():
        got[(gid, rule, mask)] = values
    return data, groups, ids, scores, got


def test_every_group_subset_and_rule_equals_brute_force(ref):
    _, _, ids, scores, got = ref
    assert len(got) == len(scores)
    worst = 0.0
    for (g, rule, mask), m in scores.items():
        values = got[(ids[g], rule, mask)]
        worst = max(worst, max(abs(a - m[k]) for a, k in zip(values, METRICS)))
    assert worst < 1e-12


def test_fused_metrics_equal_ranx_where_tie_order_cannot_matter(ref):
    data, groups, ids, _, got = ref
    cell = ("hotpotqa", "BAAI/bge-base-en-v1.5", "BAAI/bge-reranker-base")
    gs = sorted(g for g in groups if g[:3] == cell)
    runs = {s: Run({f"{g[3]}|{g[4]}": dict(groups[g][s]) for g in gs}) for s in SOLO}
    compared = 0
    for mask, members in subsets(SOLO):
        if len(members) not in (2, 3, 6):  # every pair and triple, and all six
            continue
        for rule in RULES:
            method, norm = RANX_RULE[rule]
            fused = fuse([runs[s] for s in members], norm=norm, method=method,
                         params={"k": 60} if rule == "rrf" else None).to_dict()
            keep = [g for g in gs if _order_free(fused[f"{g[3]}|{g[4]}"], data.qrels[g[4]])]
            qrels = Qrels({f"{g[3]}|{g[4]}": {d: 1 for d in data.qrels[g[4]]} for g in keep})
            run = Run({f"{g[3]}|{g[4]}": fused[f"{g[3]}|{g[4]}"] for g in keep})
            for j, m in enumerate(METRICS):
                theirs = evaluate(qrels, run, RANX[m], return_mean=False)
                mine = [got[(ids[g], rule, mask)][j] for g in sorted(keep, key=lambda g: f"{g[3]}|{g[4]}")]
                assert mine == pytest.approx(list(theirs), abs=1e-9)
            compared += len(keep)
    assert compared > 10_000


def _order_free(fused: dict[str, float], relevant: set[str]) -> bool:
    classes = defaultdict(set)
    for d, x in fused.items():
        classes[x].add(d in relevant)
    return all(len(v) == 1 for v in classes.values())


def test_ensemble_mart(db, ref):
    data, groups, _, scores, _ = ref
    rows = {r[:3]: r[3:] for r in db.execute(
        """select corpus, rule || '|' || subset_mask, metric, n_members, mean_value, sd_seeds, best_solo, best_solo_value,
                  delta, ci_low, ci_high, p_value, p_holm, family_size, is_best from rewrite_ensembles""").fetchall()}
    cells = defaultdict(list)
    for g in groups:
        cells[g[:3]].append(g)
    for cell, gs in cells.items():
        strategies = tuple(s for s in SOLO if s in groups[gs[0]])
        solo = {(s, m): {(g[3], g[4]): doc_metrics([d for d, _ in groups[g][s]], data.qrels[g[4]])[m] for g in gs}
                for s in strategies for m in METRICS}
        best = {m: max(strategies, key=lambda s: (seed_mean(solo[(s, m)]), -SOLO.index(s))) for m in METRICS}
        family = defaultdict(dict)
        for mask, members in subsets(strategies):
            for rule in RULES:
                for m in METRICS:
                    values = {(g[3], g[4]): scores[(g, rule, mask)][m] for g in gs}
                    got = rows[(cell[0], f"{rule}|{mask}", m)]
                    assert got[0] == len(members) and got[3] == best[m]
                    assert (got[1], got[2], got[4]) == pytest.approx(
                        (seed_mean(values), seed_sd(values), seed_mean(solo[(best[m], m)])), abs=1e-12)
                    if len(members) <= 2 or len(members) == len(strategies):  # the bootstrap of a sample of subsets
                        res = paired(values, solo[(best[m], m)], B, SEED)
                        assert got[5:9] == pytest.approx((res.estimate, res.ci_low, res.ci_high, res.p_value),
                                                         abs=1e-12)
                    family[(rule, m)][mask] = (got[8], got[9], got[10])
        for (rule, m), fam in family.items():
            masks = sorted(fam)
            adjusted = holm([fam[k][0] for k in masks])
            assert [fam[k][1] for k in masks] == pytest.approx(list(adjusted), abs=1e-12)
            assert {fam[k][2] for k in masks} == {len(masks)}
        best_rows = [(k, v) for k, v in rows.items() if k[0] == cell[0] and v[-1]]
        assert len(best_rows) == 4 and {k[2] for k, _ in best_rows} == set(METRICS)  # one ensemble, each metric
        primary = [v for k, v in rows.items() if k[0] == cell[0] and k[2] == "HIT@10" and v[0] >= 2]
        assert max(v[1] for v in primary) == next(v for k, v in best_rows if k[2] == "HIT@10")[1]


def test_budget_baselines(db, ref):
    rows = {(r[0], r[1], r[2]): r[3:] for r in db.execute(
        """select corpus, control, metric, status, reason, baseline_value, control_value, ensemble_value, gain_ensemble,
                  gain_control, share_captured from rewrite_budget_baselines""").fetchall()}
    ens = {(r[0], r[1]): r[2] for r in db.execute(
        "select corpus, metric, mean_value from rewrite_ensembles where is_best").fetchall()}
    solo = {(r[0], r[1]): r[2] for r in db.execute(
        "select corpus, metric, mean_value from rewrite_solo where strategy = 'S1'").fetchall()}
    for corpus in ("hotpotqa", "ambignq"):
        for control in ("S1-pool100", "S1-ann4"):
            for m in METRICS:
                status, reason, base, _, e, gain_e, gain_c, share = rows[(corpus, control, m)]
                assert e == ens[(corpus, m)] and gain_e == pytest.approx(e - base, abs=1e-12)
                if corpus == "ambignq":   # one incomplete group: the baseline over complete groups differs slightly
                    assert base == pytest.approx(solo[(corpus, m)], abs=0.01)
                else:
                    assert base == pytest.approx(solo[(corpus, m)], abs=1e-12)
                assert status == ("ok" if gain_e > 0 else "no_ensemble_gain")
                if status == "ok":
                    assert reason is None and share == pytest.approx(gain_c / gain_e, abs=1e-12)
    # the cosine stack has no control runs: every control x metric says so
    for control in ("S1-pool100", "S1-ann4"):
        for m in METRICS:
            status, reason, *_, share = rows[("scifact", control, m)]
            assert status == "not_run" and control in reason and "not been produced" in reason and share is None
