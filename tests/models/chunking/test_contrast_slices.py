"""contrast_slices on a small synthetic warehouse with analyst labels added by `ragwh label add`'s loader: every
pre-registered contrast by every built-in label; one slice's mean delta recomputed exactly from int_query_metrics and
its CI / p against an independent clustered bootstrap (a plain loop); Holm per family; the minimum-size flag; the
heterogeneity test equal to its kernel on the same deltas; a user label CSV is a slice without any code change."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.corpora.labels import add_labels
from tests.fixtures.synthetic_evaluation import Scale, load_synthetic
from tests.udfs.stats.reference import plain_clustered_bootstrap
from udfs.stats.heterogeneity import slice_heterogeneity
from udfs.stats.multiple import holm
from warehouse.db import connect
from warehouse.dbt import run_dbt

B = 400
SEED = 11
VARS = {
    "bootstrap_b": B,
    "bootstrap_seed": SEED,
    "primary_embedder": "all-MiniLM-L6-v2",
    "slice_min_queries": 8,
    "slice_min_docs": 4,
}
SCALE = Scale(n_docs=40, n_queries=160, chunks_per_doc=(5, 10), embedders=("all-MiniLM-L6-v2",), rerankers=("none",))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("slices")
    wh = tmp / "slices.duckdb"
    con = connect(wh)
    load_synthetic(con, SCALE, seed=5)
    docs = [r[0] for r in con.execute("select doc_id from documents order by doc_id").fetchall()]
    queries = [r[0] for r in con.execute("select query_id from queries order by query_id").fetchall()]
    # a document label (two venues, one of them tiny: below the minimum size) and a query label
    (tmp / "venue.csv").write_text(
        "doc_id,venue\n"
        + "".join(f"{d},{'workshop' if i < 2 else ('acl' if i % 2 else 'arxiv')}\n" for i, d in enumerate(docs))
    )
    (tmp / "grade.csv").write_text(
        "query_id,difficulty\n" + "".join(f"{q},{'hard' if i % 3 == 0 else 'easy'}\n" for i, q in enumerate(queries))
    )
    add_labels(con, tmp / "venue.csv", "documents")
    add_labels(con, tmp / "grade.csv", "queries")
    con.close()
    extra = ["--target-path", str(tmp / "target")]
    run_dbt("seed", wh, vars=VARS, extra=extra, progress=False)
    run_dbt("build", wh, select="+contrast_slices", vars=VARS, extra=extra, progress=False)
    # known answers after the fact: a label planted on C2's cov-nDCG@10 deltas (their sign: heterogeneity certain)
    # and one that ignores them (every other query: none expected), then only the label and slice models rebuilt
    con = connect(wh)
    deltas = con.execute(
        "select query_id, delta from int_contrast_deltas where contrast = 'C2' "
        "and metric = 'cov-nDCG@10' order by query_id"
    ).fetchall()
    (tmp / "planted.csv").write_text(
        "query_id,planted,alternate\n"
        + "".join(f"{q},{'up' if d > 0 else 'down'},{'a' if i % 2 else 'b'}\n" for i, (q, d) in enumerate(deltas))
    )
    add_labels(con, tmp / "planted.csv", "queries")
    con.close()
    run_dbt("build", wh, select="int_query_labels contrast_slices", vars=VARS, extra=extra, progress=False)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("RAGWH_WAREHOUSE", str(wh))
    con = connect(wh, read_only=True)  # `ragwh slice` opens it read-only beside it
    yield con
    con.close()
    monkeypatch.undo()


def _rows(con, sql, params=()):
    cur = con.execute(sql, list(params))
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def test_every_preregistered_contrast_by_every_builtin_label(built):
    got = {
        (r["contrast"], r["label"])
        for r in _rows(built, "select distinct contrast, label from contrast_slices where family = 'preregistered'")
    }
    builtin = {r["label"] for r in _rows(built, "select label from slice_labels")}
    present = {
        r["label"] for r in _rows(built, "select distinct label from int_query_labels where origin <> 'analyst'")
    }
    assert present == {"query_type", "topic_bucket", "doc_length"} <= builtin  # no gold tree in the synthetic corpus
    assert got == {
        (c, label)
        for c in ("C1", "C2", "C3", "C4")
        for label in present | {"venue", "difficulty", "planted", "alternate"}
    }
    assert {r["analysis"] for r in _rows(built, "select distinct analysis from contrast_slices")} == {"exploratory"}


def test_one_slice_recomputed_exactly_and_against_an_independent_bootstrap(built):
    slice_ = _rows(
        built,
        "select * from contrast_slices where contrast = 'C2' and metric = 'cov-nDCG@10' "
        "and label = 'query_type' and value = 'extractive'",
    )[0]
    # straight from the per-query scores: A3 - P over queries typed extractive, scored under both
    pairs = built.execute("""
        select t.query_id, q.doc_id, t.value - c.value
        from int_query_metrics t join int_query_metrics c using (corpus, embedder, reranker, metric, query_id)
        join queries q using (query_id)
        where t.condition = 'A3' and c.condition = 'P' and t.metric = 'cov-nDCG@10' and q.query_type = 'extractive'
        order by q.doc_id, t.query_id""").fetchall()
    deltas = [p[2] for p in pairs]
    docs = [p[1] for p in pairs]
    assert (slice_["n_queries"], slice_["n_docs"]) == (len(deltas), len(set(docs)))
    assert slice_["mean_delta"] == pytest.approx(np.mean(deltas), abs=1e-15)
    reps = plain_clustered_bootstrap(deltas, docs, B, SEED)  # an independent loop
    lo, hi = np.percentile(reps, [2.5, 97.5])
    assert (slice_["ci_low"], slice_["ci_high"]) == pytest.approx((lo, hi), abs=1e-12)
    assert slice_["p_value"] == min(1.0, 2 * min(np.mean(reps <= 0), np.mean(reps >= 0)))
    assert (slice_["n_boot"], slice_["boot_seed"]) == (B, SEED) and not slice_["below_min_size"]
    whole = _rows(
        built,
        "select mean_delta, n_queries from int_contrast_bootstrap where contrast = 'C2' and metric = 'cov-nDCG@10'",
    )[0]
    assert (slice_["cell_mean_delta"], slice_["cell_n_queries"]) == (whole["mean_delta"], whole["n_queries"])


def test_minimum_size_flag_holm_and_heterogeneity(built):
    rows = _rows(
        built,
        "select * from contrast_slices where contrast = 'C1' and metric = 'R@50' and label = 'venue' order by value",
    )
    by = {r["value"]: r for r in rows}
    small = by["workshop"]  # two documents: below slice_min_docs = 4
    assert small["below_min_size"] and small["p_value"] is None and small["p_holm"] is None
    assert small["ci_low"] is not None
    tested = [by["acl"], by["arxiv"]]
    assert [r["p_holm"] for r in tested] == pytest.approx(list(holm([r["p_value"] for r in tested])))
    assert all(r["holm_family_size"] == 2 for r in tested)
    # the heterogeneity test over the two testable slices equals the kernel on the same deltas
    pairs = built.execute("""
        select d.delta, d.cluster_id, l.value from int_contrast_deltas d
        join int_query_labels l on l.query_id = d.query_id and l.label = 'venue'
        where d.contrast = 'C1' and d.metric = 'R@50' and l.value <> 'workshop'""").fetchall()
    ref = slice_heterogeneity([p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs], B, SEED)
    for r in rows:
        assert r["heterogeneity_q"] == pytest.approx(ref.statistic, rel=1e-9)
        assert (r["heterogeneity_p"], r["heterogeneity_n_slices"]) == (ref.p_value, 2)


def test_a_user_label_is_a_slice(built):
    rows = _rows(
        built,
        "select value, n_queries, label_origin from contrast_slices where contrast = 'C3' "
        "and metric = 'MRR' and label = 'difficulty' order by value",
    )
    n_scored = built.execute(
        "select count(*) from int_contrast_deltas where contrast = 'C3' and metric = 'MRR'"
    ).fetchone()[0]
    assert [r["value"] for r in rows] == ["easy", "hard"] and {r["label_origin"] for r in rows} == {"analyst"}
    assert sum(r["n_queries"] for r in rows) == n_scored


def test_cli_slice_table_csv_and_forest_plot(built, tmp_path):
    from typer.testing import CliRunner

    from ragwh.cli import app

    out = CliRunner().invoke(
        app, ["slice", "--contrast", "C2", "--by", "venue", "--figures", str(tmp_path)], env={"COLUMNS": "200"}
    )
    assert out.exit_code == 0, out.output
    assert "C2 by venue · cov-nDCG@10" in out.output and "below minimum size: no p" in out.output
    assert "heterogeneity across venue" in out.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "slice-c2-venue-cov-ndcg-10.pdf",
        "slice-c2-venue-cov-ndcg-10.svg",
    ]
    csv_out = CliRunner().invoke(
        app, ["slice", "--contrast", "C2", "--by", "venue", "--metric", "MRR", "--csv", "--figures", str(tmp_path)]
    )
    lines = csv_out.output.strip().splitlines()
    assert lines[0].startswith("contrast,corpus,embedder") and len(lines) == 1 + 3  # acl, arxiv, workshop
    missing = CliRunner().invoke(app, ["slice", "--contrast", "C2", "--by", "nothing"])
    assert missing.exit_code == 1 and "no label 'nothing' for C2" in missing.output
    unknown = CliRunner().invoke(app, ["slice", "--contrast", "C9", "--by", "venue"])
    assert unknown.exit_code == 1 and "no contrast 'C9'" in unknown.output


def test_paper_tables_and_report_section(built, tmp_path):
    from ragwh.experiment.report.slices import section_slices
    from ragwh.experiment.tables import write_tables
    from ragwh.experiment.tables.build import Context, build
    from ragwh.experiment.tables.slices import chunking_definitions

    definitions = {d.name: d for d in chunking_definitions(built)}
    assert set(definitions) == {
        f"slices-{label}"
        for label in ("query_type", "topic_bucket", "doc_length", "venue", "difficulty", "planted", "alternate")
    }
    tables = build(built, definitions["slices-venue"], Context())
    assert len(tables) == 1 and tables[0].group["metric"] == "cov-nDCG@10"  # the primary cell
    for fmt in ("latex", "csv", "markdown"):
        assert write_tables(tables, definitions["slices-venue"], tmp_path, fmt).exists()
    md = (tmp_path / "slices-venue.md").read_text()
    assert "Slices by venue (exploratory)" in md and "below minimum size" in md and "heterogeneity p" in md
    assert "\\begin{table}" in (tmp_path / "slices-venue.tex").read_text()
    csv_rows = (tmp_path / "slices-venue.csv").read_text().splitlines()
    assert len(csv_rows) == 1 + 4 * 3  # contrasts x venues
    html = section_slices(built, "chunking")
    assert html.count("<details>") == 7 and "<summary>venue</summary>" in html
    assert html.count("<img") == 7 * 4  # a forest plot per label x contrast


def test_heterogeneity_known_answers_in_the_mart(built):
    """A label planted on the deltas' sign splits them: heterogeneity detected (no replicate reaches Q); a label
    that ignores them (alternate queries) shows none."""
    planted = _rows(
        built,
        "select * from contrast_slices where contrast = 'C2' and metric = 'cov-nDCG@10' "
        "and label = 'planted' order by value",
    )
    assert [r["value"] for r in planted] == ["down", "up"]
    assert planted[0]["mean_delta"] < 0 < planted[1]["mean_delta"]
    assert {r["heterogeneity_p"] for r in planted} == {0.0} and {r["heterogeneity_n_slices"] for r in planted} == {2}
    alternate = _rows(
        built,
        "select distinct heterogeneity_p from contrast_slices where contrast = 'C2' "
        "and metric = 'cov-nDCG@10' and label = 'alternate'",
    )
    assert len(alternate) == 1 and alternate[0]["heterogeneity_p"] > 0.05
