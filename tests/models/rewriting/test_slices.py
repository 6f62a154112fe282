"""rewrite_slices on the folder's shared synthetic build: each strategy, each pre-declared ensemble and the
cross-fitted router against S1 at seed 42, sliced by the built-in labels; one slice's mean delta recomputed
exactly from rewrite_query_metrics and its CI / p against an independent paired bootstrap (a plain loop); Holm
within (contrast, cell, metric, label)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.rewriting.conftest import SEED, B
from udfs.stats.multiple import holm


def _rows(db, sql, params=()):
    cur = db.execute(sql, list(params))
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def test_comparisons_and_labels(db):
    kinds = {
        (r["kind"], r["contrast"])
        for r in _rows(db, "select distinct kind, contrast from rewrite_slices where corpus = 'hotpotqa'")
    }
    strategies = {
        r["strategy"]
        for r in _rows(
            db, "select distinct strategy from rewrite_query_metrics where corpus = 'hotpotqa' and strategy <> 'S1'"
        )
    }
    assert {c for k, c in kinds if k == "solo"} == strategies
    predeclared = {r["label"] for r in _rows(db, "select label from int_rewrite_subsets where predeclared")}
    assert {c for k, c in kinds if k == "ensemble"} == predeclared
    assert {c for k, c in kinds if k == "router"} == {
        f"router:{s}"
        for s in strategies
        if s in {r["strategy"] for r in _rows(db, "select strategy from int_rewrite_solo_strategies")}
    }
    assert {r["label"] for r in _rows(db, "select distinct label from rewrite_slices")} >= {"query_type"}
    assert {r["seed"] for r in _rows(db, "select distinct seed from rewrite_slices")} == {42}


def test_one_slice_exactly_and_against_an_independent_paired_bootstrap(db):
    row = _rows(
        db,
        "select * from rewrite_slices where contrast = 'Q2D' and corpus = 'hotpotqa' and metric = 'HIT@10' "
        "and label = 'query_type' order by n_queries desc limit 1",
    )[0]
    pairs = db.execute(
        """
        select t.query_id, t.value - b.value from rewrite_query_metrics t
        join rewrite_query_metrics b using (corpus, embedder, reranker, seed, query_id, metric)
        join queries q using (query_id)
        where t.strategy = 'Q2D' and b.strategy = 'S1' and t.seed = 42 and t.corpus = 'hotpotqa'
          and t.metric = 'HIT@10' and q.query_type = ? order by t.query_id""",
        [row["value"]],
    ).fetchall()
    deltas = np.array([p[1] for p in pairs])
    assert row["n_queries"] == len(deltas) and row["mean_delta"] == pytest.approx(deltas.mean(), abs=1e-15)
    rng = np.random.default_rng(SEED)
    reps = np.array([deltas[rng.integers(0, len(deltas), len(deltas))].mean() for _ in range(B)])
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(tuple(np.percentile(reps, [2.5, 97.5])), abs=1e-12)
    if not row["below_min_size"]:
        zero = np.abs(reps) <= 1e-12 * max(np.abs(deltas).max(), 1e-300)
        assert row["p_value"] == min(1.0, 2 * min(np.mean((reps < 0) | zero), np.mean((reps > 0) | zero)))
    assert (row["n_boot"], row["boot_seed"]) == (B, SEED)


def test_holm_within_each_family(db):
    rows = _rows(
        db,
        "select contrast, corpus, embedder, reranker, metric, label, value, p_value, p_holm "
        "from rewrite_slices where not below_min_size order by all",
    )
    families: dict[tuple, list[dict]] = {}
    for r in rows:
        families.setdefault(
            tuple(r[k] for k in ("contrast", "corpus", "embedder", "reranker", "metric", "label")), []
        ).append(r)
    assert families
    for members in families.values():
        assert [m["p_holm"] for m in members] == pytest.approx(list(holm([m["p_value"] for m in members])))


def test_cli_slices_a_rewriting_comparison(db, warehouse, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ragwh.cli import app

    monkeypatch.setenv("RAGWH_WAREHOUSE", str(warehouse[0]))
    out = CliRunner().invoke(
        app,
        ["slice", "--contrast", "Q2D", "--by", "query_type", "--corpus", "hotpotqa", "--figures", str(tmp_path)],
        env={"COLUMNS": "200"},
    )
    assert out.exit_code == 0, out.output
    assert "Q2D by query_type · HIT@10" in out.output and "heterogeneity across query_type" in out.output
    assert {p.suffix for p in tmp_path.iterdir()} == {".svg", ".pdf"}
    ensemble = CliRunner().invoke(
        app, ["slice", "--contrast", "S1+Q2D", "--by", "query_type", "--csv", "--figures", str(tmp_path)]
    )
    assert ensemble.exit_code == 0 and ensemble.output.count("S1+Q2D,") >= 1
