"""Ensembles and budget controls: every subset x fusion rule scored per group equals a brute-force fusion
(ties by doc_id) and ranx fuse + evaluate (where tie order cannot matter); the ensemble mart's means,
deltas against the best solo strategy, bootstrap and Holm within the pre-declared / exploratory family,
pooled over seeds and on seed 42; the seed-42 ensembles of a hand-made case; the budget controls' share of
the reference ensemble's gain on the same queries, and 'not_run' rows where the control runs are missing."""

from __future__ import annotations

from collections import defaultdict

import pytest
from ranx import Qrels, Run, evaluate, fuse

from tests.models.rewriting.conftest import SEED, B
from tests.models.rewriting.hand_case import SEED42
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
from udfs.stats.multiple import holm  # = statsmodels multipletests(method="holm"): tests/udfs/test_statistics.py

RULES = ("max", "rrf", "combsum", "combmnz")
RANX_RULE = {
    "max": ("max", None),
    "rrf": ("rrf", "min-max"),
    "combsum": ("sum", "min-max"),
    "combmnz": ("mnz", "min-max"),
}


@pytest.fixture(scope="module")
def ref(db):
    data = Data(db)
    groups = complete_groups(data)
    ids = {
        tuple(r[1:]): r[0]
        for r in db.execute(
            "select group_id, corpus, embedder, reranker, seed, query_id from int_rewrite_groups where complete"
        ).fetchall()
    }
    scores = {}
    for g, lists in groups.items():
        strategies = tuple(s for s in SOLO if s in lists)
        for mask, members in subsets(strategies):
            for rule in RULES:
                ranked = ref_fuse([lists[s] for s in members], rule)
                scores[(g, rule, mask)] = doc_metrics(ranked, data.qrels[g[4]])
    got = {}
    for gid, rule, mask, *values in db.execute(
        "select group_id, rule, subset_mask, hit, recall, ndcg, mrr from int_rewrite_ensemble_scores"
    ).fetchall():
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
            fused = fuse(
                [runs[s] for s in members], norm=norm, method=method, params={"k": 60} if rule == "rrf" else None
            ).to_dict()
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


PREDECLARED = {
    ("S1", "Q2D"),
    ("S1", "HyDE", "Q2D"),
    ("S1", "S3", "S4", "HyDE"),
    ("S1", "S3", "S4", "HyDE", "Q2D"),
    ("HyDE", "Q2D"),
}
REFERENCE = ("S1", "S3", "S4", "HyDE")


def _mask(members) -> int:
    return sum(1 << SOLO.index(s) for s in members)


def _scopes(groups):
    """(cell, scope) -> the complete groups of the scope: 'pooled' every seed, 'seed' seed 42 alone."""
    out = defaultdict(list)
    for g in groups:
        out[(g[:3], "pooled")].append(g)
        if g[3] == 42:
            out[(g[:3], "seed")].append(g)
    return out


def test_ensemble_mart(db, ref):
    data, groups, _, scores, _ = ref
    rows = {
        r[:4]: r[4:]
        for r in db.execute(
            """select corpus, scope, rule || '|' || subset_mask, metric, n_members, mean_value, sd_seeds, best_solo,
                  best_solo_value, delta, ci_low, ci_high, p_value, p_holm, family_size, is_best, family, seed, n_seeds
           from rewrite_ensembles"""
        ).fetchall()
    }
    predeclared = {_mask(p) for p in PREDECLARED}
    n_expected = 0
    for (cell, scope), gs in _scopes(groups).items():
        strategies = tuple(s for s in SOLO if s in groups[gs[0]])
        solo = {
            (s, m): {(g[3], g[4]): doc_metrics([d for d, _ in groups[g][s]], data.qrels[g[4]])[m] for g in gs}
            for s in strategies
            for m in METRICS
        }
        best = {m: max(strategies, key=lambda s: (seed_mean(solo[(s, m)]), -SOLO.index(s))) for m in METRICS}
        family = defaultdict(dict)
        for mask, members in subsets(strategies):
            for rule in RULES:
                for m in METRICS:
                    values = {(g[3], g[4]): scores[(g, rule, mask)][m] for g in gs}
                    got = rows[(cell[0], scope, f"{rule}|{mask}", m)]
                    n_expected += 1
                    assert got[0] == len(members) and got[3] == best[m]
                    fam = (
                        "single"
                        if len(members) == 1
                        else "predeclared"
                        if rule == "max" and mask in predeclared
                        else "exploratory"
                    )
                    assert got[12:] == (
                        fam,
                        42 if scope == "seed" else None,
                        1 if scope == "seed" else len({g[3] for g in gs}),
                    )
                    assert (got[1], got[4]) == pytest.approx(
                        (seed_mean(values), seed_mean(solo[(best[m], m)])), abs=1e-12
                    )
                    assert got[2] is None if scope == "seed" else got[2] == pytest.approx(seed_sd(values), abs=1e-12)
                    if len(members) <= 2 or len(members) == len(strategies):  # the bootstrap of a sample of subsets
                        res = paired(values, solo[(best[m], m)], B, SEED)
                        assert got[5:9] == pytest.approx(
                            (res.estimate, res.ci_low, res.ci_high, res.p_value), abs=1e-12
                        )
                    family[(m, got[12])][(rule, mask)] = (got[8], got[9], got[10])
        # Holm within each family of the cell x scope x metric: the pre-declared subsets (rule max) and
        # every other subset of two or more x rule; a one-member subset is in no family
        for (m, fam_name), fam in family.items():
            if fam_name == "single":
                assert {v[1:] for v in fam.values()} == {(None, None)} and len(fam) == len(strategies) * len(RULES)
                continue
            keys = sorted(fam)
            adjusted = holm([fam[k][0] for k in keys])
            assert [fam[k][1] for k in keys] == pytest.approx(list(adjusted), abs=1e-12)
            assert {fam[k][2] for k in keys} == {len(keys)}
            if fam_name == "predeclared":
                assert len(keys) == sum(set(p) <= set(strategies) for p in PREDECLARED)
        best_rows = [(k, v) for k, v in rows.items() if k[:2] == (cell[0], scope) and v[11]]
        assert len(best_rows) == 4 and {k[3] for k, _ in best_rows} == set(METRICS)  # one ensemble, each metric
        primary = [v for k, v in rows.items() if k[:2] == (cell[0], scope) and k[3] == "HIT@10" and v[0] >= 2]
        assert max(v[1] for v in primary) == next(v for k, v in best_rows if k[3] == "HIT@10")[1]
    assert n_expected == len(rows)


def test_seed42_ensembles_of_the_hand_case(db):
    """The paper's seed-42 post-hoc ensembles of the three hand-made queries (hand_case.py, computed by hand):
    the members' top-20 pools merged by max score and cut at 10, against the best solo method on seed 42."""
    got = {
        (r[0], r[1]): r[2:]
        for r in db.execute(
            """select subset, metric, mean_value, best_solo, best_solo_value, delta, n_queries, n_seeds, family, family_size
           from rewrite_ensembles where corpus = 'hand' and scope = 'seed' and seed = 42 and rule = 'max'"""
        ).fetchall()
    }
    for (subset, metric), (value, delta) in SEED42.items():
        mean_value, best_solo, best_value, d, n_queries, n_seeds, family, family_size = got[(subset, metric)]
        assert (best_solo, n_queries, n_seeds, family, family_size) == ("HyDE", 3, 1, "predeclared", 3)
        assert (mean_value, best_value, d) == pytest.approx((value, 2 / 3, delta), abs=1e-15)
    # pooled over both seeds the best solo strategy is S1 (all three at 1/2, the baseline first)
    pooled = db.execute("""select distinct best_solo, best_solo_value from rewrite_ensembles
                           where corpus = 'hand' and scope = 'pooled' and metric = 'HIT@10'""").fetchall()
    assert pooled == [("S1", 0.5)]
    # the oracle union at seed 42: some member hits every query; the best member is HyDE
    oracle = db.execute("""select oracle_hit, best_member, best_member_hit, predeclared from rewrite_oracle
                           where corpus = 'hand' and scope = 'seed' and subset = 'S1+HyDE+Q2D'""").fetchone()
    assert oracle[:2] == (1.0, "HyDE") and oracle[2] == pytest.approx(2 / 3, abs=1e-15) and oracle[3]


def test_budget_baselines(db, ref):
    """The control's gain over S1 over the reference ensemble's (S1+S3+S4+HyDE, rule max), both on the same
    (query, seed) pairs: complete groups where the control is scored."""
    data, groups, _, scores, _ = ref
    rows = {
        r[:4]: r[4:]
        for r in db.execute(
            """select corpus, scope, control, metric, status, reason, n_queries, baseline_value, control_value, reference_value,
                  gain_control, ci_low, ci_high, p_value, gain_reference, share_captured, reference_subset, seed
           from rewrite_budget_baselines"""
        ).fetchall()
    }
    metrics = {
        (*k, m): v
        for k in data.scored()
        for m, v in doc_metrics([d for d, _ in data.lists[k]], data.qrels[k[5]]).items()
    }
    ref_mask = _mask(REFERENCE)
    n_ok = 0
    for (cell, scope), gs in _scopes(groups).items():
        for control in ("S1-pool100", "S1-ann4"):
            for m in METRICS:
                status, reason, n_q, base, ctrl, refv, gain_c, lo, hi, p, gain_r, share, label, seed = rows[
                    (cell[0], scope, control, m)
                ]
                assert seed == (42 if scope == "seed" else None)
                pairs = [g for g in gs if (*g[:3], control, g[3], g[4], m) in metrics]
                if not pairs:
                    assert status == "not_run" and control in reason and "not been produced" in reason and share is None
                    continue
                c = {(g[3], g[4]): metrics[(*g[:3], control, g[3], g[4], m)] for g in pairs}
                b = {(g[3], g[4]): metrics[(*g[:3], "S1", g[3], g[4], m)] for g in pairs}
                r = {(g[3], g[4]): scores[(g, "max", ref_mask)][m] for g in pairs}
                res_c, res_r = paired(c, b, B, SEED), paired(r, b, B, SEED)
                assert label == "S1+HyDE+S3+S4" and n_q == res_c.n
                assert (base, ctrl, refv) == pytest.approx((seed_mean(b), seed_mean(c), seed_mean(r)), abs=1e-12)
                assert (gain_c, lo, hi, p, gain_r) == pytest.approx(
                    (res_c.estimate, res_c.ci_low, res_c.ci_high, res_c.p_value, res_r.estimate), abs=1e-12
                )
                if res_r.estimate > 0:
                    assert status == "ok" and reason is None
                    assert share == pytest.approx(res_c.estimate / res_r.estimate, abs=1e-12)
                    n_ok += 1
                else:
                    assert status == "no_reference_gain" and share is None and "does not beat S1" in reason
    assert n_ok > 0
    # the paper's share: the pooled (3-seed) control gain / (the seed-42 reference value - the pooled S1 value),
    # the same on both scope rows; a share differing from the scope-consistent one somewhere
    paper = {
        r[:4]: r[4:]
        for r in db.execute(
            "select corpus, scope, control, metric, paper_reference_gain, share_paper from rewrite_budget_baselines"
        ).fetchall()
    }
    n_paper, differs = 0, False
    for (corpus, scope, control, m), (den, share_p) in paper.items():
        pooled, on_seed = rows[(corpus, "pooled", control, m)], rows[(corpus, "seed", control, m)]
        want_den = None if on_seed[5] is None or pooled[3] is None else on_seed[5] - pooled[3]
        assert den == pytest.approx(want_den, abs=1e-12)
        if want_den is not None and want_den > 0:
            assert share_p == pytest.approx(pooled[6] / want_den, abs=1e-12)
            n_paper += 1
            differs |= (
                rows[(corpus, scope, control, m)][11] is None
                or abs(share_p - rows[(corpus, scope, control, m)][11]) > 1e-6
            )
        else:
            assert share_p is None
    assert n_paper > 0 and differs
    # the cosine stack has no control runs, the hand cell no S3 / S4 (no reference): every row says so
    for control in ("S1-pool100", "S1-ann4"):
        for m in METRICS:
            assert rows[("scifact", "pooled", control, m)][0] == "not_run"
            assert rows[("hand", "seed", control, m)][0] == "not_run"
