"""Per-query metrics equal ranx on the same runs; the solo table's seed means, sd,
paired bootstrap against S1 and Holm (statsmodels) recomputed from the loaded tables."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from tests.models.rewriting.conftest import SEED, B
from tests.models.rewriting.reference import Data, paired, ranx_metrics, seed_mean, seed_sd
from udfs.stats.multiple import holm  # = statsmodels multipletests(method="holm"): tests/udfs/test_statistics.py


@pytest.fixture(scope="module")
def ref(db):
    data = Data(db)
    return data, ranx_metrics(data)


def test_query_metrics_equal_ranx(db, ref):
    _, want = ref
    got = {
        r[:7]: r[7]
        for r in db.execute(
            "select corpus, embedder, reranker, strategy, seed, query_id, metric, value from rewrite_query_metrics"
        ).fetchall()
    }
    assert set(got) == set(want)
    assert max(abs(got[k] - want[k]) for k in want) < 1e-9
    assert {k[3] for k in got} == {"S1", "S2", "S3", "S4", "HyDE", "Q2D", "S1-pool100", "S1-ann4"}


def test_unscored_rankings_are_counted_not_dropped(db):
    rows = {
        (c, scope, item, reason): n
        for c, scope, item, reason, n in db.execute(
            "select corpus, scope, item, reason, n from rewrite_exclusions"
        ).fetchall()
    }
    # hotpotqa/q00003 lost its qrels: each of its 8 strategies x 3 seeds rankings is no_relevant_qrels
    assert all(
        rows[("hotpotqa", "ranking", s, "no_relevant_qrels")] == 3
        for s in ("S1", "S2", "S3", "S4", "HyDE", "Q2D", "S1-pool100", "S1-ann4")
    )
    assert rows[("ambignq", "ranking", "S2", "nan_score")] == 1
    assert rows[("ambignq", "ranking", "S2", "scored")] == 40 * 3 - 1
    # groups: the NaN ranking and the deleted S4 ranking each make one (seed, query) incomplete
    assert rows[("ambignq", "group", "(solo strategies)", "incomplete")] == 1
    assert rows[("scifact", "group", "(solo strategies)", "incomplete")] == 1
    assert rows[("scifact", "group", "(solo strategies)", "complete")] == 30 * 3 - 1
    assert rows[("hotpotqa", "answer", "S1", "no_gold_answer")] == 3


def test_solo_table(db, ref):
    data, metrics = ref
    per = defaultdict(dict)
    for (c, e, r, s, seed, q, m), v in metrics.items():
        if data.kind[s] == "solo":
            per[(c, e, r, s, m)][(seed, q)] = v
    got = {
        r[:5]: r[5:]
        for r in db.execute(
            """select corpus, embedder, reranker, strategy, metric, n_seeds, mean_value, sd_seeds, n_paired, delta,
                  ci_low, ci_high, p_value, p_holm, family_size from rewrite_solo"""
        ).fetchall()
    }
    assert set(got) == set(per)
    pvals = defaultdict(dict)
    for key, values in per.items():
        n_seeds, mean, sd, n_paired, delta, lo, hi, p, _, _ = got[key]
        assert n_seeds == len({seed for seed, _ in values}) and mean == pytest.approx(seed_mean(values), abs=1e-12)
        assert sd == pytest.approx(seed_sd(values), abs=1e-12)
        if key[3] == "S1":
            assert n_paired == 0 and delta is None and p is None
            continue
        res = paired(values, per[(*key[:3], "S1", key[4])], B, SEED)
        assert (n_paired, delta, lo, hi, p) == pytest.approx(
            (res.n, res.estimate, res.ci_low, res.ci_high, res.p_value), abs=1e-12
        )
        pvals[(*key[:3], key[4])][key[3]] = p
    for cell, family in pvals.items():
        names = sorted(family)
        adjusted = holm([family[n] for n in names])
        for n, a in zip(names, adjusted):
            assert got[(*cell[:3], n, cell[3])][8] == pytest.approx(a, abs=1e-12)
            assert got[(*cell[:3], n, cell[3])][9] == len(names)
    # the cosine-only stack has no S3: its Holm family is the other four
    assert {got[k][9] for k in got if k[0] == "scifact" and k[3] != "S1"} == {4}
    # the baseline does not depend on the seed, so its sd over seeds is 0; a rewriting strategy's is not
    assert got[("hotpotqa", "BAAI/bge-base-en-v1.5", "BAAI/bge-reranker-base", "S1", "HIT@10")][2] == 0
    assert np.mean([got[k][2] for k in got if k[3] == "Q2D"]) > 0
