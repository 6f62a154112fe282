"""The router's tau sweep (expansion, HIT@10 and deltas vs always-S1 / always-merge,
wins / ties / losses, LLM calls and tokens only expanded queries pay), the tau rules (same dataset,
transferred, cross-fitted without leakage) with their gaps, and the Pareto front."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from tests.models.rewriting.conftest import SEED, B
from tests.models.rewriting.hand_case import CELL
from tests.models.rewriting.reference import METRICS, SOLO, Data, complete_groups, doc_metrics, fuse, paired, seed_mean

HAND = CELL[0]
TAUS = (0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80)
COSINE_TAUS = tuple(round(0.30 + 0.05 * i, 2) for i in range(11))


@pytest.fixture(scope="module")
def ref(db):
    """Per (cell, helper, seed, query): the baseline's top-1 score, metrics of baseline / merge /
    helper, and the helper's (calls, tokens)."""
    data = Data(db)
    rows = {}
    for g, lists in complete_groups(data).items():
        if g[0] == HAND:  # the hand-made ensemble cell (two seeds, no LLM calls) is checked in test_ensembles_budget
            continue
        cell, seed, q = g[:3], g[3], g[4]
        base = doc_metrics([d for d, _ in lists["S1"]], data.qrels[q])
        for h in lists:
            if h == "S1":
                continue
            merged = fuse([lists["S1"], lists[h]], "max")
            keys = data.calls.get((cell[0], cell[1], h, seed, q), set())
            tokens = sum(sum(data.tokens[k]) for k in keys)
            rows[(cell, h, seed, q)] = (
                lists["S1"][0][1],
                base,
                doc_metrics(merged, data.qrels[q]),
                doc_metrics([d for d, _ in lists[h]], data.qrels[q]),
                len(keys),
                tokens,
            )
    return data, rows


def _router(rows, cell, helper, tau_of):
    """values keyed (seed, query) of router / baseline / merge per metric, and the expansion set."""
    out = defaultdict(dict)
    expanded = set()
    for (c, h, seed, q), (top1, base, merge, _, _, _) in rows.items():
        if (c, h) != (cell, helper):
            continue
        tau = tau_of(q)
        exp = tau is not None and top1 < tau
        if exp:
            expanded.add((seed, q))
        for m in METRICS:
            out[("router", m)][(seed, q)] = merge[m] if exp else base[m]
            out[("base", m)][(seed, q)] = base[m]
            out[("merge", m)][(seed, q)] = merge[m]
    return out, expanded


def test_tau_sweep(db, ref):
    _, rows = ref
    got = {
        r[:4]: r[4:]
        for r in db.execute(
            """select corpus, helper, tau, metric, pct_expanded, n_expanded, router_value, baseline_value, merge_value,
                  delta_vs_baseline, delta_vs_baseline_ci_low, delta_vs_baseline_p, delta_vs_merge, delta_vs_merge_p,
                  n_wins, n_ties, n_losses, llm_calls, prompt_tokens + completion_tokens, tokens_per_query
           from rewrite_router_sweep where corpus <> 'hand'"""
        ).fetchall()
    }
    cells = {(c, h) for c, h, _, _ in rows}
    n = 0
    for cell, helper in cells:
        for tau in COSINE_TAUS if cell[2] == "none" else TAUS:
            vals, expanded = _router(rows, cell, helper, lambda q, t=tau: t)
            mine = [(s, q) for (c, h, s, q) in rows if (c, h) == (cell, helper)]
            calls = sum(rows[(cell, helper, s, q)][4] for s, q in expanded)
            tokens = sum(rows[(cell, helper, s, q)][5] for s, q in expanded)
            for m in METRICS:
                g = got[(cell[0], helper, tau, m)]
                vs_base = paired(vals[("router", m)], vals[("base", m)], B, SEED)
                vs_merge = paired(vals[("router", m)], vals[("merge", m)], B, SEED)
                share = {s: np.mean([(s2, q) in expanded for s2, q in mine if s2 == s]) for s in (42, 123, 2024)}
                wins = sum(vals[("merge", m)][k] > vals[("base", m)][k] for k in expanded)
                ties = sum(vals[("merge", m)][k] == vals[("base", m)][k] for k in expanded)
                assert g[0] == pytest.approx(np.mean(list(share.values())), abs=1e-12) and g[1] == len(expanded)
                assert g[2:5] == pytest.approx(
                    (seed_mean(vals[("router", m)]), seed_mean(vals[("base", m)]), seed_mean(vals[("merge", m)])),
                    abs=1e-12,
                )
                assert g[5:10] == pytest.approx(
                    (vs_base.estimate, vs_base.ci_low, vs_base.p_value, vs_merge.estimate, vs_merge.p_value), abs=1e-12
                )
                assert g[10:13] == (wins, ties, len(expanded) - wins - ties)
                assert g[13:15] == (calls, tokens) and g[15] == pytest.approx(tokens / len(mine), abs=1e-12)
                n += 1
    assert n == len(got) == (2 * 5 * 7 + 4 * 11) * 4
    # expansion grows with tau; at the highest tau the router is closest to always-merge
    hot = sorted((k[2], v[0]) for k, v in got.items() if k[:2] == ("hotpotqa", "Q2D") and k[3] == "HIT@10")
    assert [p for _, p in hot] == sorted(p for _, p in hot) and 0 < hot[0][1] < hot[-1][1] < 1


def test_tau_rules_and_cross_fitting_without_leakage(db, ref):
    _, rows = ref
    folds = dict(
        db.execute("select distinct query_id, fold from int_rewrite_router_queries where corpus <> 'hand'").fetchall()
    )
    assert len(folds) == len({q for *_, q in rows}) and set(folds.values()) <= set(range(5))
    got = {
        r[:4]: r[4:]
        for r in db.execute(
            """select corpus, helper, rule, source, tau, n_folds, n_folds_without_tau, pct_expanded, router_value,
                  best_grid_tau, best_grid_value, gap from rewrite_router_tau
           where metric = 'HIT@10' and corpus <> 'hand'"""
        ).fetchall()
    }
    sweep = {
        (r[0], r[1], r[2]): r[3]
        for r in db.execute(
            "select corpus, helper, tau, router_value from rewrite_router_sweep where metric = 'HIT@10'"
        ).fetchall()
    }
    base = {}
    for (cell, h, seed, q), (top1, b, *_) in rows.items():
        base[(cell, seed, q)] = (top1, b["HIT@10"])

    def midpoint(cell, keep=lambda q: True):
        hit = [t for (c, _, q), (t, h) in base.items() if c == cell and keep(q) and h == 1]
        miss = [t for (c, _, q), (t, h) in base.items() if c == cell and keep(q) and h == 0]
        return (np.mean(hit) + np.mean(miss)) / 2 if hit and miss else None

    cells = {c for c, *_ in rows}
    stacks = {c: [o for o in cells if o[1:] == c[1:] and o != c] for c in cells}
    for cell in cells:
        for helper in {h for c, h, _, _ in rows if c == cell}:
            grid = {t: v for (c, h, t), v in sweep.items() if (c, h) == (cell[0], helper)}
            best_tau = min(t for t, v in grid.items() if v == max(grid.values()))
            fold_tau = {f: midpoint(cell, _outside(folds, f)) for f in {folds[q] for (c, _, q) in base if c == cell}}
            choices = [("paper", ("fixed",), _const(0.65)), ("same_dataset", cell, _const(midpoint(cell)))]
            choices += [("transfer", o, _const(midpoint(o))) for o in stacks[cell]]
            choices.append(("cross_fit", cell, _per_fold(folds, fold_tau)))
            # each fold's tau is fitted without the fold's queries: not the in-sample tau, so an SQL
            # that leaked (fitted on all queries) would expand other queries and fail below
            assert any(abs(t - midpoint(cell)) > 1e-9 for t in fold_tau.values())
            for rule, source, tau_of in choices:
                vals, expanded = _router(rows, cell, helper, tau_of)
                tau, n_folds, n_without, pct, value, bt, bv, gap = got[(cell[0], helper, rule, source[0])]
                want_tau = np.mean(list(fold_tau.values())) if rule == "cross_fit" else tau_of(None)
                assert tau == pytest.approx(want_tau, abs=1e-12)
                assert n_folds == (len(fold_tau) if rule == "cross_fit" else 1) and n_without == 0
                assert value == pytest.approx(seed_mean(vals[("router", "HIT@10")]), abs=1e-12)
                share = {k: float(k in expanded) for k in vals[("router", "HIT@10")]}
                assert pct == pytest.approx(seed_mean(share), abs=1e-12)
                assert (bt, bv) == (best_tau, grid[best_tau]) and gap == pytest.approx(value - bv, abs=1e-12)
    assert {k[2] for k in got} == {"paper", "same_dataset", "transfer", "cross_fit"}
    assert not any(k[2] == "transfer" and k[0] == "scifact" for k in got)  # alone in its stack


def _const(tau):
    return lambda q: tau


def _outside(folds, fold):
    return lambda q: folds[q] != fold


def _per_fold(folds, fold_tau):
    return lambda q: fold_tau[folds[q]]


def test_pareto_front(db):
    pts = db.execute(
        "select corpus, setting, helper, tau, value, cost, cost_axis, on_front from rewrite_router_pareto "
        "where corpus <> 'hand'"
    ).fetchall()
    by = defaultdict(list)
    for p in pts:
        by[p[0]].append(p)
    for corpus, ps in by.items():
        assert {p[6] for p in ps} == {"tokens"}  # every synthetic call reports its tokens
        for p in ps:
            dominated = any(o[5] <= p[5] and o[4] >= p[4] and (o[5] < p[5] or o[4] > p[4]) for o in ps)
            assert p[7] == (not dominated)
        baseline = [p for p in ps if p[1] == "always-baseline"]
        assert len(baseline) == 1 and baseline[0][5] == 0 and baseline[0][7]
        assert {p[1] for p in ps} == {"always-baseline", "helper-alone", "always-merge", "router"}
        assert {p[2] for p in ps if p[1] == "router"} == (
            {"S2", "S4", "HyDE", "Q2D"} if corpus == "scifact" else set(SOLO) - {"S1"}
        )
