"""The slice heterogeneity test (udfs/stats/heterogeneity.py): hand-computed statistic, known answers (identical
slices -> no heterogeneity, a planted effect in one slice -> detected), calibration under the null, a plain
loop over the same draws, and its SQL UDF."""

import duckdb
import numpy as np
import pytest

from udfs.register import register_all
from udfs.stats.heterogeneity import slice_heterogeneity


def _data(rng, n_docs=60, planted=0.0, slices=("a", "b", "c")):
    """Deltas of queries nested in documents (a document effect + noise), each query in a random slice;
    ``planted`` is added to every delta of slice 'b'."""
    docs = np.repeat([f"d{d:03d}" for d in range(n_docs)], rng.integers(1, 6, n_docs))
    doc_effect = dict(zip(np.unique(docs), rng.normal(0, 0.1, n_docs)))
    groups = rng.choice(np.array(slices), size=len(docs))
    deltas = 0.02 + np.array([doc_effect[d] for d in docs]) + rng.normal(0, 0.2, len(docs))
    return deltas + planted * (groups == "b"), docs, groups


def _plain_loop(values, clusters, groups, n_boot, seed):
    """Q and #{Q* >= Q}, one replicate at a time (the module doc's formulas, nothing shared)."""
    labels = sorted(set(clusters))
    slices = sorted(set(groups))
    means = {g: np.mean([v for v, gg in zip(values, groups) if gg == g]) for g in slices}

    def spread(m, n):
        total = sum(n.values())
        pooled = sum(n[g] * m[g] for g in m) / total
        return sum(n[g] / total * (m[g] - pooled) ** 2 for g in m)

    q = spread(means, {g: sum(1 for gg in groups if gg == g) for g in slices})
    rng = np.random.default_rng(seed)
    exceed = 0
    for _ in range(n_boot):
        drawn = rng.integers(0, len(labels), size=len(labels))
        sums = {g: 0.0 for g in slices}
        ns = {g: 0 for g in slices}
        for j in drawn:
            for v, c, g in zip(values, clusters, groups):
                if c == labels[j]:
                    sums[g] += v - means[g]
                    ns[g] += 1
        kept = [g for g in slices if ns[g] > 0]
        exceed += spread({g: sums[g] / ns[g] for g in kept}, {g: ns[g] for g in kept}) >= q - 1e-12 * max(q, 1)
    return q, exceed


def test_hand_case_statistic():
    # slice a: 0.1, 0.3 (mean 0.2); slice b: 0.0; pooled 2/15; Q = 2/3 (1/15)^2 + 1/3 (2/15)^2 = 2/225
    res = slice_heterogeneity([0.1, 0.3, 0.0], ["d1", "d2", "d3"], ["a", "a", "b"], n_boot=50, seed=1)
    assert res.statistic == pytest.approx(2 / 225, abs=1e-15)
    assert (res.n_slices, res.n, res.n_clusters) == (2, 3, 3)


def test_identical_slices_show_no_heterogeneity():
    rng = np.random.default_rng(5)
    base = rng.normal(0.05, 0.2, 40)
    values = np.concatenate([base, base, base])  # three slices holding the very same deltas
    groups = np.repeat(["x", "y", "z"], 40)
    clusters = np.array([f"d{i % 25:02d}" for i in range(120)])
    res = slice_heterogeneity(values, clusters, groups, n_boot=1000, seed=3)
    assert res.statistic == pytest.approx(0.0, abs=1e-15)
    assert res.p_value == 1.0 and res.n_exceed == 1000


def test_planted_effect_in_one_slice_is_detected_and_null_is_not():
    rng = np.random.default_rng(11)
    v, c, g = _data(rng, planted=0.25)
    assert slice_heterogeneity(v, c, g, n_boot=2000, seed=7).p_value < 0.001
    v0, c0, g0 = _data(np.random.default_rng(11), planted=0.0)
    assert slice_heterogeneity(v0, c0, g0, n_boot=2000, seed=7).p_value > 0.05


def test_calibrated_under_the_null():
    """No heterogeneity planted: about 5% of 200 data sets reject at 0.05 (binomial 99% band: 3..19)."""
    rejections = sum(
        slice_heterogeneity(*_data(np.random.default_rng(100 + i), n_docs=40), n_boot=300, seed=i).p_value < 0.05
        for i in range(200)
    )
    assert 3 <= rejections <= 19


def test_matches_a_plain_loop_over_the_same_draws():
    rng = np.random.default_rng(2)
    v, c, g = _data(rng, n_docs=12, planted=0.1)
    q, exceed = _plain_loop(list(v), list(c), list(g), 300, seed=9)
    res = slice_heterogeneity(v, c, g, n_boot=300, seed=9)
    assert res.statistic == pytest.approx(q, rel=1e-12)
    assert res.n_exceed == exceed and res.p_value == exceed / 300


def test_one_slice_and_bad_input():
    res = slice_heterogeneity([0.1, 0.2], ["d1", "d2"], ["a", "a"], n_boot=10, seed=0)
    assert res.n_slices == 1 and np.isnan(res.p_value)
    with pytest.raises(ValueError, match="lengths differ"):
        slice_heterogeneity([0.1], ["d1", "d2"], ["a"], n_boot=10)
    with pytest.raises(ValueError, match="non-finite"):
        slice_heterogeneity([float("nan"), 0.1], ["d1", "d2"], ["a", "b"], n_boot=10)
    with pytest.raises(ValueError, match="no values"):
        slice_heterogeneity([], [], [], n_boot=10)


def test_sql_udf_equals_the_kernel():
    rng = np.random.default_rng(4)
    v, c, g = _data(rng, n_docs=20, planted=0.2)
    con = duckdb.connect()
    register_all(con)
    got = con.execute(
        "SELECT slice_heterogeneity(?::DOUBLE[], ?::VARCHAR[], ?::VARCHAR[], 500, 13)", [list(v), list(c), list(g)]
    ).fetchone()[0]
    ref = slice_heterogeneity(v, c, g, n_boot=500, seed=13)
    assert got == {"statistic": ref.statistic, "p_value": ref.p_value, "n_exceed": ref.n_exceed, "n_slices": 3}


def test_many_tests_at_once_equal_separate_calls():
    from udfs.stats.heterogeneity import slice_heterogeneity_many

    data = [_data(np.random.default_rng(20 + i), n_docs=15, planted=0.1 * i) for i in range(3)]
    same_docs = (data[0][0] * 2, data[0][1], data[0][2])  # the first test's documents again: one shared product
    problems = [*data, same_docs, ([0.1, 0.2], ["d1", "d2"], ["a", "a"])]
    many = slice_heterogeneity_many(
        [p[0] for p in problems], [p[1] for p in problems], [p[2] for p in problems], 200, 5
    )
    assert many == [slice_heterogeneity(*p, n_boot=200, seed=5) for p in problems[:4]] + [many[4]]
    assert many[4].n_slices == 1 and np.isnan(many[4].p_value)
