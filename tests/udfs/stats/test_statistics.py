import numpy as np
import pytest
import statsmodels.formula.api as smf
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

from tests.udfs.stats.reference import plain_clustered_bootstrap
from udfs.stats.bootstrap import cluster_bootstrap, cluster_bootstrap_many, replicate_means
from udfs.stats.effects import cohens_dz, cohens_dz_rows, mde
from udfs.stats.mixed import mixedlm_contrast
from udfs.stats.multiple import holm, holm_families


def _clustered_data(rng, n_docs=40, effect=0.05):
    docs = np.repeat([f"doc{d:03d}" for d in range(n_docs)], rng.integers(1, 6, n_docs))
    doc_effect = {d: rng.normal(0, 0.1) for d in np.unique(docs)}
    deltas = effect + np.array([doc_effect[d] for d in docs]) + rng.normal(0, 0.2, len(docs))
    perm = rng.permutation(len(docs))
    return deltas[perm], docs[perm]


def test_bootstrap_matches_plain_loop_with_same_seed():
    rng = np.random.default_rng(1)
    v, c = _clustered_data(rng)
    ref = plain_clustered_bootstrap(list(v), list(c), 2500, seed=42)
    got = replicate_means(v, c, 2500, seed=42)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-13)
    res = cluster_bootstrap(v, c, 2500, seed=42)
    lo, hi = np.percentile(ref, [2.5, 97.5])
    p = min(1.0, 2 * min(np.mean(ref <= 0), np.mean(ref >= 0)))
    assert (res.ci_low, res.ci_high) == pytest.approx((lo, hi), abs=1e-13)
    assert res.p_value == p and res.estimate == pytest.approx(v.mean())
    assert res.se == pytest.approx(np.std(ref, ddof=1), abs=1e-13)
    assert (res.n, res.n_clusters) == (len(v), 40)
    # the replicates on the far side of zero, from which p = min(1, 2 n_far / B)
    assert res.n_far == min(int((ref <= 0).sum()), int((ref >= 0).sum())) and res.p_value == min(
        1.0, 2 * res.n_far / 2500
    )


def test_shared_draws_equal_separate_calls_and_rerun_is_identical():
    rng = np.random.default_rng(2)
    v1, c1 = _clustered_data(rng)
    v2 = v1[::-1] * 2
    c2 = c1[::-1]
    v3, c3 = _clustered_data(rng, n_docs=25)
    many = cluster_bootstrap_many([v1, v2, v3], [c1, c2, c3], 3000, seed=9)
    for (v, c), r in zip([(v1, c1), (v2, c2), (v3, c3)], many):
        single = cluster_bootstrap(v, c, 3000, seed=9)
        assert r.ci_low == pytest.approx(single.ci_low, abs=1e-13)
        assert r.p_value == single.p_value
    assert cluster_bootstrap_many([v1], [c1], 3000, 9) == cluster_bootstrap_many([v1], [c1], 3000, 9)


def test_bootstrap_hand_cases_and_bad_input():
    # all deltas positive: every replicate > 0 -> p = 2 * min(1, 0)... = 0
    r = cluster_bootstrap([0.1, 0.2, 0.3], ["a", "b", "b"], 200, 0)
    assert r.p_value == 0.0 and 0.1 <= r.ci_low <= r.ci_high <= 0.3 and r.n_far == 0
    # two documents, deltas +0.1 and -0.3: a replicate is positive only when it draws 'a' twice
    r = cluster_bootstrap([0.1, -0.3], ["a", "b"], 4000, 5)
    assert r.n_far / 4000 == pytest.approx(0.25, abs=0.02) and r.p_value == 2 * r.n_far / 4000
    # all zero: Pr[<=0] = Pr[>=0] = 1 -> p clipped to 1
    zero = cluster_bootstrap([0.0, 0.0], ["a", "b"], 100, 0)
    assert zero.p_value == 1.0 and zero.n_far == 100  # exact zeros count on both sides
    with pytest.raises(ValueError, match="non-finite"):
        cluster_bootstrap([0.1, float("nan")], ["a", "b"], 10, 0)
    with pytest.raises(ValueError, match="no values"):
        cluster_bootstrap([], [], 10, 0)


def test_holm_matches_statsmodels():
    rng = np.random.default_rng(4)
    for m in (1, 2, 4, 7, 20):
        p = rng.uniform(0, 0.2, m)
        p[rng.integers(0, m)] = p[0]  # ties
        np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1], atol=1e-15)
    fams = [list(rng.uniform(0, 0.1, n)) for n in (4, 1, 3, 6)]
    got = holm_families(fams)
    for i, f in enumerate(fams):
        np.testing.assert_allclose(
            got.values[got.offsets[i] : got.offsets[i + 1]], multipletests(f, method="holm")[1], atol=1e-15
        )
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.5]), [0.04, 0.09, 0.09, 0.5])
    with pytest.raises(ValueError):
        holm([0.1, float("nan")])


def test_cohens_dz_and_mde():
    d = [0.1, 0.3, -0.1, 0.5]
    assert cohens_dz(d) == pytest.approx(np.mean(d) / np.std(d, ddof=1))
    np.testing.assert_allclose(cohens_dz_rows([d, [1.0], [2.0, 2.0]]), [cohens_dz(d), np.nan, np.nan])
    assert mde(0.01) == pytest.approx((norm.ppf(0.975) + norm.ppf(0.8)) * 0.01)
    assert mde(0.01) == pytest.approx(0.02801585, abs=1e-8)


def test_mixedlm_matches_statsmodels_formula():
    rng = np.random.default_rng(6)
    docs = np.repeat(np.arange(30), rng.integers(1, 5, 30))
    base = rng.normal(0.5, 0.1, 30)[docs] + rng.normal(0, 0.05, len(docs))
    scores = np.concatenate([base + 0.03 + rng.normal(0, 0.05, len(docs)), base])
    treat = np.concatenate([np.ones(len(docs), bool), np.zeros(len(docs), bool)])
    groups = np.concatenate([docs, docs]).astype(str)
    got = mixedlm_contrast(scores, treat, groups)
    import pandas as pd

    frame = pd.DataFrame({"score": scores, "condition": np.where(treat, "T", "C"), "doc": groups})
    fit = smf.mixedlm("score ~ C(condition, Treatment('C'))", frame, groups=frame["doc"]).fit(reml=True)
    assert got.coef == pytest.approx(fit.fe_params.iloc[1], abs=1e-8)
    assert got.se == pytest.approx(fit.bse_fe.iloc[1], abs=1e-8)
    assert got.p_value == pytest.approx(fit.pvalues.iloc[1], abs=1e-8)
    assert (got.n_obs, got.n_groups) == (2 * len(docs), 30)


def test_exactly_zero_replicates_count_in_both_tails():
    # R@50-like deltas in thirds, one query per document: a replicate mean is exactly 0 iff
    # sum_j c_j * 3 v_j == 0 (c_j = times document j is drawn); in floating point the matrix product
    # leaves some of those at +-1e-17, which must not decide the tails.
    from fractions import Fraction

    thirds = [1, 0, -2, -1, -3, -3, -3]
    values, clusters, n_boot, seed = [t / 3 for t in thirds], [str(i) for i in range(7)], 2000, 11
    reps = replicate_means(values, clusters, n_boot, seed)
    assert ((np.abs(reps) < 1e-12) & (reps != 0)).any()  # the rounding case is present
    rng = np.random.default_rng(seed)  # the documented draw: blocks of 1000 replicates
    exact = []
    for b0 in range(0, n_boot, 1000):
        for row in rng.integers(0, 7, size=(min(1000, n_boot - b0), 7)):
            c = np.bincount(row, minlength=7)
            exact.append(Fraction(int(np.dot(c, thirds)), 3 * 7))
    le = np.mean([x <= 0 for x in exact])
    ge = np.mean([x >= 0 for x in exact])
    result = cluster_bootstrap(values, clusters, n_boot, seed)
    assert result.p_value == pytest.approx(min(1.0, 2 * min(le, ge)), abs=1e-12)


def test_paired_bootstrap_equals_cluster_bootstrap_with_one_unit_per_value():
    from udfs.stats.bootstrap import paired_bootstrap, paired_bootstrap_many

    rng = np.random.default_rng(9)
    values = rng.normal(0.05, 0.3, 257)
    labels = [f"q{i:04d}" for i in range(len(values))]  # distinct labels sorting in list order
    ours = paired_bootstrap(values, 1500, 21)
    ref = cluster_bootstrap(values, labels, 1500, 21)
    assert (ours.n, ours.n_clusters) == (ref.n, ref.n_clusters) == (257, 257)
    assert ours.estimate == pytest.approx(ref.estimate, abs=1e-15)
    assert (ours.ci_low, ours.ci_high, ours.se) == pytest.approx((ref.ci_low, ref.ci_high, ref.se), abs=1e-12)
    assert ours.p_value == ref.p_value
    # problems of equal length share draws: each result equals its own call (to rounding: the
    # matrix product sums in another order)
    many = paired_bootstrap_many([values, values[::-1], values[:100]], 1500, 21)
    for got, alone in ((many[0], ours), (many[2], paired_bootstrap(values[:100], 1500, 21))):
        assert got.p_value == alone.p_value and got.n == alone.n
        assert (got.estimate, got.ci_low, got.ci_high, got.se) == pytest.approx(
            (alone.estimate, alone.ci_low, alone.ci_high, alone.se), abs=1e-12
        )


def test_paired_bootstrap_hand_case_and_errors():
    from udfs.stats.bootstrap import paired_bootstrap

    res = paired_bootstrap([1.0, 1.0, 1.0], 200, 0)  # every replicate is 1: CI [1, 1], p = 0
    assert (res.estimate, res.ci_low, res.ci_high, res.p_value) == (1.0, 1.0, 1.0, 0.0)
    zero = paired_bootstrap([0.0, 0.0], 200, 0)  # all exact zeros count in both tails
    assert zero.p_value == 1.0
    with pytest.raises(ValueError, match="non-finite"):
        paired_bootstrap([0.1, float("nan")], 10, 0)
    with pytest.raises(ValueError, match="no values"):
        paired_bootstrap([], 10, 0)
