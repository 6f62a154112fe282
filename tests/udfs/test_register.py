"""The SQL UDFs return exactly what the Python kernels return, over list columns in many batches."""

import duckdb
import numpy as np
import pytest

from udfs.metrics.cov_ndcg import cov_dcg, cov_idcg, cov_ndcg
from udfs.metrics.span_recall import span_recall
from udfs.metrics.token_budget import token_budget_coverage
from udfs.register import UDFS, register_all
from udfs.stats.bootstrap import cluster_bootstrap
from udfs.stats.multiple import holm


@pytest.fixture()
def db():
    con = duckdb.connect()
    register_all(con)
    register_all(con)  # idempotent
    yield con
    con.close()


def test_all_udfs_registered(db):
    names = {r[0] for r in db.execute("select distinct function_name from duckdb_functions()").fetchall()}
    assert set(UDFS) <= names


def test_span_metrics_udfs_match_kernels_across_batches(db):
    rng = np.random.default_rng(0)
    n = 5000  # > DuckDB's 2048-row vectors: several UDF calls
    rows = []
    for _ in range(n):
        m = int(rng.integers(0, 12))
        a = rng.integers(0, 500, m)
        s = rng.integers(0, 400, 2)
        rows.append(
            (
                a.tolist(),
                (a + rng.integers(0, 90, m)).tolist(),
                rng.integers(0, 300, m).tolist(),
                s.tolist(),
                (s + rng.integers(1, 80, 2)).tolist(),
            )
        )
    db.execute("create table t (i int, rs bigint[], re bigint[], tok bigint[], ss bigint[], se bigint[])")
    db.executemany("insert into t values (?, ?, ?, ?, ?, ?)", [(i, *r) for i, r in enumerate(rows)])
    got = np.array(
        db.execute("""select cov_ndcg(rs, re, ss, se, rs, re, 10), span_recall(rs, re, ss, se, 50),
                                        token_budget_coverage(rs, re, tok, ss, se, 512),
                                        cov_dcg(rs, re, ss, se, 10), cov_idcg(rs, re, ss, se, 10)
                                 from t order by i""").fetchall()
    )
    rs, re, tok, ss, se = (list(c) for c in zip(*rows))
    np.testing.assert_allclose(got[:, 0], cov_ndcg(rs, re, ss, se, rs, re, 10), atol=1e-12)
    np.testing.assert_allclose(got[:, 1], span_recall(rs, re, ss, se, 50), atol=1e-12)
    np.testing.assert_allclose(got[:, 2], token_budget_coverage(rs, re, tok, ss, se, 512), atol=1e-12)
    np.testing.assert_allclose(got[:, 3], cov_dcg(rs, re, ss, se, 10), atol=1e-12)
    np.testing.assert_allclose(got[:, 4], cov_idcg(rs, re, ss, se, 10), atol=1e-12)


def test_statistics_udfs_match_kernels(db):
    res = db.execute(
        "select unnest(cluster_bootstrap([0.1, -0.2, 0.3, 0.05], ['a', 'b', 'b', 'c'], 500, 3))"
    ).fetchone()
    ref = cluster_bootstrap([0.1, -0.2, 0.3, 0.05], ["a", "b", "b", "c"], 500, 3)
    # n_far (replicates on the far side of zero) to the struct
    assert res == (ref.estimate, ref.ci_low, ref.ci_high, ref.p_value, ref.se, 4, 3, ref.n_far)
    got = db.execute("select holm_adjust([0.01, 0.04, 0.03, 0.5])").fetchone()[0]
    np.testing.assert_allclose(got, holm([0.01, 0.04, 0.03, 0.5]))
    assert db.execute("select mde(0.01)").fetchone()[0] == pytest.approx(0.02801585, abs=1e-8)


def test_non_constant_k_is_an_error(db):
    with pytest.raises(duckdb.Error, match="k must be constant"):
        db.execute("select span_recall([0], [10], [0], [10], i::bigint) from range(1, 3) t(i)").fetchall()


def test_rewriting_udfs_match_kernels(db):
    from udfs.metrics.squad import squad_scores
    from udfs.stats.bootstrap import paired_bootstrap

    rng = np.random.default_rng(4)
    rows = [rng.normal(0, 1, int(rng.integers(1, 40))).tolist() for _ in range(3000)]  # several UDF batches
    db.execute("create table b (i int, v double[])")
    db.executemany("insert into b values (?, ?)", list(enumerate(rows)))
    got = db.execute("select unnest(paired_bootstrap(v, 300, 5)) from b order by i").fetchall()
    for i in (0, 1234, 2999):
        ref = paired_bootstrap(rows[i], 300, 5)
        assert got[i][3] == ref.p_value and got[i][:3] == pytest.approx(
            (ref.estimate, ref.ci_low, ref.ci_high), abs=1e-12
        )
    answers = db.execute("""select squad_score(a, g).em, squad_score(a, g).f1, squad_normalize(a)
                            from (values ('The Eiffel Tower!', ['eiffel tower in Paris', 'Eiffel tower']),
                                         ('1889', ['in 1887'])) t(a, g)""").fetchall()
    em, f1 = squad_scores(["The Eiffel Tower!", "1889"], [["eiffel tower in Paris", "Eiffel tower"], ["in 1887"]])
    assert answers == [(em[0], f1[0], "eiffel tower"), (em[1], f1[1], "1889")]
