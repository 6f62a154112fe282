"""Answer quality: reader answers scored with SQuAD v1.1 EM / F1 (max over aliases; the official logic
re-typed in tests/udfs/test_squad.py), the paired contrasts S1 / always-merge / router overall and
split by the router's expansion, and the reader's inputs (seeds and the seeded query sample)."""

from __future__ import annotations

import hashlib
import shutil
from collections import defaultdict

import pytest

from tests.models.rewriting.conftest import SEED, VARS, B
from tests.models.rewriting.reference import Data, complete_groups, fuse, paired, seed_mean
from tests.udfs.test_squad import ref_exact_match_score, ref_f1_score, ref_metric_max_over_ground_truths
from warehouse.db import connect
from warehouse.dbt import run_dbt


@pytest.fixture(scope="module")
def answers(db):
    gold = defaultdict(list)
    for q, a in db.execute("select query_id, answer from query_answers order by query_id, answer_idx").fetchall():
        gold[q].append(a)
    scored = {}
    for c, e, r, setting, helper, tau, seed, q, answer in db.execute(
        "select corpus, embedder, reranker, setting, helper, tau, seed, query_id, answer from reader_answers"
    ).fetchall():
        if gold[q]:
            scored[(c, e, r, setting, helper, tau, seed, q)] = {
                "EM": float(ref_metric_max_over_ground_truths(ref_exact_match_score, answer, gold[q])),
                "F1": float(ref_metric_max_over_ground_truths(ref_f1_score, answer, gold[q])),
            }
    return scored


def test_answer_scores_equal_the_official_logic(db, answers):
    got = {
        r[:8]: r[8:]
        for r in db.execute(
            "select corpus, embedder, reranker, setting, helper, tau, seed, query_id, status, em, f1 from rewrite_answer_scores"
        ).fetchall()
    }
    for key, s in answers.items():
        assert got[key] == ("scored", s["EM"], pytest.approx(s["F1"], abs=1e-15))
    missing = [k for k, v in got.items() if v[0] == "no_gold_answer"]
    assert (
        len(missing) == 9 and {k[7] for k in missing} == {"hotpotqa/q00010"} and all(got[k][1] is None for k in missing)
    )
    partial = [v[2] for v in got.values() if v[0] == "scored" and 0 < v[2] < 1]
    assert partial  # the synthetic reader writes partly right answers: F1 strictly between 0 and 1


def test_answer_contrasts_and_the_triggered_split(db, answers):
    top1 = {(c, e, r, seed, q): lst[0][1] for (c, e, r, s, seed, q), lst in Data(db).lists.items() if s == "S1"}
    got = {
        r[:6]: r[6:]
        for r in db.execute(
            """select corpus, helper, tau, metric, split, contrast, n_seeds, n_queries, mean_treatment, mean_control,
                  delta, ci_low, ci_high, p_value from rewrite_answer_quality"""
        ).fetchall()
    }
    arms = defaultdict(dict)
    for (c, e, r, setting, helper, tau, seed, q), s in answers.items():
        arms[(c, e, r, setting, helper, tau)][(seed, q)] = s
    n = 0
    for (c, e, r, setting, helper, tau), router in arms.items():
        if setting != "router":
            continue
        s1, merge = arms[(c, e, r, "S1", None, None)], arms[(c, e, r, "always-merge", helper, None)]
        expanded = {k for k in s1 if top1[(c, e, r, *k)] < tau}
        for name, t, b in (
            ("always-merge - S1", merge, s1),
            ("router - S1", router, s1),
            ("router - always-merge", router, merge),
        ):
            for split, keep in (("all", set(s1)), ("triggered", expanded), ("untriggered", set(s1) - expanded)):
                for m in ("EM", "F1"):
                    tv = {k: v[m] for k, v in t.items() if k in keep and k in b}
                    cv = {k: v[m] for k, v in b.items() if k in keep and k in t}
                    res = paired(tv, cv, B, SEED)
                    g = got[(c, helper, tau, m, split, name)]
                    assert g[1] == res.n and g[2:4] == pytest.approx((seed_mean(tv), seed_mean(cv)), abs=1e-12)
                    assert g[4:8] == pytest.approx((res.estimate, res.ci_low, res.ci_high, res.p_value), abs=1e-12)
                    n += 1
    # the synthetic reader answered at tau 0.65: the paper's fixed tau (var router_paper_tau), and no
    # cell's in-sample midpoint
    flags = db.execute("select distinct tau, paper_tau, midpoint_tau from rewrite_answer_quality order by 1").fetchall()
    assert flags == [(0.65, True, False), (None, False, False)]
    keys_without_tau = [k for k in got if k[2] is None]
    assert {k[5] for k in keys_without_tau} == {"always-merge - S1"} and {k[4] for k in keys_without_tau} == {"all"}
    assert n + len(keys_without_tau) == len(got) == 2 * (18 + 2)
    # the triggered and untriggered queries partition all queries
    for (c, h, tau, m, split, name), g in got.items():
        if split == "triggered":
            assert g[1] + got[(c, h, tau, m, "untriggered", name)][1] == got[(c, h, tau, m, "all", name)][1]


def test_reader_inputs(db):
    """The default protocol (the paper's): seed 42 only, a sample of 200 queries per cell (every query here)."""
    data = Data(db)
    groups = {g: v for g, v in complete_groups(data).items() if g[3] == 42}
    got = defaultdict(list)
    for c, e, r, setting, helper, tau, seed, q, expanded, top_k, rank, d, text, qtext in db.execute(
        """select corpus, embedder, reranker, setting, helper, tau, seed, query_id, expanded, top_k, rank, doc_id,
                      passage, query_text from rewrite_reader_inputs order by all"""
    ).fetchall():
        assert top_k == 5 and text.startswith("Doc ") and qtext.split()[1] == "question"
        got[(c, e, r, setting, helper, tau, seed, q)].append((rank, d, expanded))
    assert {k[6] for k in got} == {42}
    taus = {(0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80)}
    n = 0
    for g, lists in groups.items():
        c, e, r, seed, q = g
        s1 = [d for d, _ in lists["S1"][:5]]
        assert [d for _, d, _ in got[(c, e, r, "S1", None, None, seed, q)]] == s1
        if "Q2D" not in lists:
            continue
        merged = fuse([lists["S1"], lists["Q2D"]], "max")[:5]
        assert [d for _, d, _ in got[(c, e, r, "always-merge", "Q2D", None, seed, q)]] == merged
        grid = (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80) if r == "none" else next(iter(taus))
        for tau in grid:
            rows = got[(c, e, r, "router", "Q2D", tau, seed, q)]
            expanded = lists["S1"][0][1] < tau
            assert [d for _, d, _ in rows] == (merged if expanded else s1) and {x for *_, x in rows} == {expanded}
            n += 1
    assert n > 0 and {k[4] for k in got} == {None, "Q2D"}  # var reader_helpers: Q2D only
    assert {k[:3] + (k[7],) for k in got} == {g[:3] + (g[4],) for g in groups}
    # the router is read at the paper's fixed tau 0.65 and at the per-dataset midpoint (the project's
    # addition), beside the grid
    midpoint = dict(
        ((c, e, r), t)
        for c, e, r, t in db.execute(
            "select corpus, embedder, reranker, tau from int_rewrite_router_tau_fits where rule = 'same_dataset'"
        ).fetchall()
    )
    assert midpoint and 0.65 not in midpoint.values()
    for g, lists in groups.items():
        for tau in (0.65, midpoint.get(g[:3])):
            if "Q2D" in lists and tau is not None:
                rows = got[(*g[:3], "router", "Q2D", tau, g[3], g[4])]
                expanded = lists["S1"][0][1] < tau
                want = fuse([lists["S1"], lists["Q2D"]], "max")[:5] if expanded else [d for d, _ in lists["S1"][:5]]
                assert [d for _, d, _ in rows] == want


def test_reader_sample_and_seeds(warehouse, tmp_path):
    """var reader_sample queries per cell, drawn with var reader_sample_seed (the first by md5('<seed>|<query_id>')
    among the queries with a complete group at a seed of var reader_seeds), and only those seeds."""
    wh, _ = warehouse
    copy = tmp_path / "sample.duckdb"
    shutil.copy(wh, copy)
    run_dbt(
        "run",
        copy,
        select="rewrite_reader_inputs",
        progress=False,
        vars={**VARS, "reader_sample": 7, "reader_sample_seed": 5, "reader_seeds": [42, 123]},
        extra=["--target-path", str(tmp_path / "target")],
    )
    con = connect(copy, read_only=True)
    try:
        got = defaultdict(set)
        for c, seed, q in con.execute("select distinct corpus, seed, query_id from rewrite_reader_inputs").fetchall():
            got[c].add((seed, q))
        candidates = defaultdict(set)
        for g in complete_groups(Data(con)):
            if g[3] in (42, 123):
                candidates[g[0]].add(g[4])
    finally:
        con.close()
    assert set(got) == set(candidates)
    for c, queries in candidates.items():
        chosen = sorted(queries, key=lambda q: (hashlib.md5(f"5|{q}".encode()).hexdigest(), q))[:7]
        assert {q for _, q in got[c]} == set(chosen) and {s for s, _ in got[c]} == {42, 123}
