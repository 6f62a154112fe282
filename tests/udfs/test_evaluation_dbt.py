"""One dbt build of the evaluation models on a small synthetic warehouse (with bad input planted),
checked against the Python kernels computed straight from the loaded tables."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from ingest.retrieval.imported import import_run
from tests.fixtures.synthetic_evaluation import CONDITIONS, Scale, load_synthetic
from udfs.metrics.binary import mrr, ndcg_binary
from udfs.metrics.cov_ndcg import cov_ndcg
from udfs.metrics.span_recall import span_recall
from udfs.metrics.token_budget import token_budget_coverage
from udfs.stats.bootstrap import cluster_bootstrap
from udfs.stats.effects import cohens_dz
from udfs.stats.mixed import mixedlm_contrast
from udfs.stats.multiple import holm
from warehouse.db import connect
from warehouse.dbt import run_dbt

B = 400
SEED = 11
VARS = {"bootstrap_b": B, "bootstrap_seed": SEED, "primary_embedder": "all-MiniLM-L6-v2"}
SCALE = Scale(n_docs=30, n_queries=70, chunks_per_doc=(5, 12), embedders=("all-MiniLM-L6-v2",), rerankers=("none",))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("evaluation")
    wh = tmp / "eval.duckdb"
    con = connect(wh)
    load_synthetic(con, SCALE, seed=3)
    # bad input: a query without evidence, a span past the document end, a NaN score, and A1 missing
    # for three queries (pairing must drop them and say so)
    con.execute("delete from evidence where query_id = 'qasper/q00040'")
    con.execute("update evidence set char_end = 10000000 where query_id = 'qasper/q00041'")
    con.execute(
        "update runs set score = 'nan'::double where query_id = 'qasper/q00042' and condition = 'A3' and rank = 5"
    )
    con.execute(
        "delete from runs where condition = 'A1' and query_id in ('qasper/q00050', 'qasper/q00051', 'qasper/q00052')"
    )
    _load_document_corpus(con)
    _load_hand_corpus(con)
    con.close()
    extra = ["--target-path", str(tmp / "target")]
    run_dbt("seed", wh, vars=VARS, extra=extra)
    run_dbt("run", wh, select="+tag:evaluation", vars=VARS, extra=["--exclude", "tag:evaluation", *extra])
    con = connect(wh)  # an outside system's TREC run over G3's chunk ids, ranks only (constant scores)
    run_file = tmp / "outside.run"
    run_file.write_text(
        "".join(f"hand/q1 Q0 structural:gold|hand/d|{c} {r} 1.0 outside\n" for c, r in ((1, 3), (2, 1), (0, 2)))
    )
    import_run(con, run_file, "outside", "G3", corpus="hand")
    con.close()
    run_dbt("build", wh, select="tag:evaluation", vars=VARS, extra=extra)
    con = connect(wh)  # same configuration as the connection dbt keeps open in this process
    yield con
    con.close()


DOC_RUNS = {  # query -> ranked documents; QRELS: query -> {document: relevance}
    "scifact/qa": ["scifact/3", "scifact/1", "scifact/5", "scifact/2"],
    "scifact/qb": ["scifact/4", "scifact/6", "scifact/2", "scifact/1", "scifact/3"],
    "scifact/qc": ["scifact/1", "scifact/2"],
}
QRELS = {
    "scifact/qa": {"scifact/1": 1, "scifact/2": 2, "scifact/6": 1},
    "scifact/qb": {"scifact/2": 1, "scifact/5": 0},
    "scifact/qc": {"scifact/1": 0},
}  # no relevant judgment: excluded and counted


def _load_document_corpus(con) -> None:
    """A qrels-judged corpus (condition DOC: one chunk per document) next to the span corpus."""
    docs = [f"scifact/{i}" for i in range(1, 7)]
    con.executemany(
        "insert into documents values (?, 'scifact', ?, ?, null, 'test', 'synthetic')",
        [(d, d, f"{d}\n\nabstract text") for d in docs],
    )
    con.executemany(
        "insert into chunks values ('doc', ?, ?, 0, 0, ?, 4, null)",
        [(f"doc|{d}|0", d, len(f"{d}\n\nabstract text")) for d in docs],
    )
    con.executemany(
        "insert into chunk_prefixes values ('doc', ?, 'title', 0, ?, 3)",  # DOC: BEIR's title + " "
        [(f"doc|{d}|0", d + " ") for d in docs],
    )
    con.executemany("insert into queries values (?, null, 'scifact', 'claim', 'claim')", [(q,) for q in DOC_RUNS])
    con.executemany("insert into qrels values (?, ?, ?)", [(q, d, r) for q, j in QRELS.items() for d, r in j.items()])
    con.executemany(
        "insert into runs values ('scifact', 'all-MiniLM-L6-v2', 'none', 'DOC', ?, ?, ?, ?)",
        [(q, i + 1, f"doc|{d}|0", 1.0 - i / 10) for q, ds in DOC_RUNS.items() for i, d in enumerate(ds)],
    )


def _load_hand_corpus(con) -> None:
    """One document whose body [3, 303) is three gold-structure chunks of 100 characters (250 content + 10
    prefix tokens each) and one query with the gold span [153, 253)."""
    con.execute(
        "insert into documents values ('hand/d', 'hand', 'H', 'H\n\n' || repeat('x', 300), null, 'test', 'hand')"
    )
    con.executemany(
        "insert into chunks values ('structural:gold', ?, 'hand/d', ?, ?, ?, 250, 0)",
        [(f"structural:gold|hand/d|{i}", i, 3 + 100 * i, 103 + 100 * i) for i in range(3)],
    )
    con.executemany(
        "insert into chunk_prefixes values ('structural:gold', ?, 'path', 3, '[H]\n\n', 10)",
        [(f"structural:gold|hand/d|{i}",) for i in range(3)],
    )
    con.execute("insert into queries values ('hand/q1', 'hand/d', 'hand', 'which x', 'extractive')")
    con.execute("insert into evidence values ('hand/q1', 0, 'hand/d', 153, 253, 'exact')")


def test_an_imported_run_scores_to_hand_computed_values(built):
    """The imported ranks (chunk 2, chunk 0, chunk 1: constant scores, so the file's ranks decide) scored by hand:
    chunk 2 covers 50 of the span's 100 characters, chunk 0 none, chunk 1 the other 50."""
    got = dict(built.execute("select metric, value from query_metrics where embedder = 'outside'").fetchall())
    assert [
        c for (c,) in built.execute("select chunk_id from runs where embedder = 'outside' order by rank").fetchall()
    ] == ["structural:gold|hand/d|2", "structural:gold|hand/d|0", "structural:gold|hand/d|1"]
    dcg = 0.5 + 0.5 / np.log2(4)
    ideal = 0.5 + 0.5 / np.log2(3)
    expected = {
        "cov-nDCG@10": dcg / ideal,
        "nDCG@10": (1 + 1 / np.log2(4)) / (1 + 1 / np.log2(3)),  # both halves are relevant (>= 50% of the span)
        "MRR": 1.0,
        "R@50": 1.0,
        "TBC@512": 0.5,  # 260 tokens per chunk: only the first fits in 512
        "TBC@1024": 1.0,
        "TBC@2048": 1.0,
    }
    assert got == pytest.approx(expected, abs=1e-12)
    kind, params = built.execute(
        "select system_kind, system_params from run_manifest where embedder = 'outside'"
    ).fetchone()
    assert kind == "imported" and '"order": "score descending' in params


def test_graded_qrels_rescored_by_ranx_equal_cov_ndcg(built, tmp_path):
    """`ragwh export trec`'s coverage gains, re-scored with ranx's nDCG@10, equal the mart's cov-nDCG@10 within 1e-9
    (the chunks of a condition tile their document: the definitions coincide) for every query whose top 10 holds no
    tied score (ranx orders ties its own way, the mart by the stored rank)."""
    from ranx import Qrels, Run, evaluate

    from ragwh.experiment.export import export_trec

    out = export_trec(built, "G3", tmp_path, corpus="qasper", embedder="all-MiniLM-L6-v2")
    qrels = Qrels.from_file(str(out.graded_file), kind="trec")
    run = Run.from_file(str(out.run_file), kind="trec")
    kept = sorted(set(qrels.keys()))
    scores = evaluate(qrels, Run({q: dict(run[q]) for q in kept}), "ndcg@10", return_mean=False)
    mart = dict(
        built.execute("""select query_id, value from query_metrics where corpus = 'qasper' and condition = 'G3'
                                 and embedder = 'all-MiniLM-L6-v2' and reranker = 'none' and metric = 'cov-nDCG@10'""").fetchall()
    )
    assert set(kept) == set(mart)
    tied = {
        q
        for (q,) in built.execute("""select query_id from runs where condition = 'G3' and corpus = 'qasper'
        and embedder = 'all-MiniLM-L6-v2' and reranker = 'none' and rank <= 11 group by query_id
        having count(distinct score) < count(*)""").fetchall()
    }
    compared = [(q, s) for q, s in zip(kept, scores) if q not in tied]
    assert len(compared) > 40
    assert max(abs(s - mart[q]) for q, s in compared) < 1e-9


def test_document_level_metrics_equal_ranx(built):
    from ranx import Qrels, Run, evaluate

    kept = ["scifact/qa", "scifact/qb"]
    qrels = Qrels({q: QRELS[q] for q in kept})
    run = Run({q: {d: 1.0 - i / 10 for i, d in enumerate(DOC_RUNS[q])} for q in kept})
    got = {
        (r[0], r[1]): r[2]
        for r in built.execute("select query_id, metric, value from query_metrics where corpus = 'scifact'").fetchall()
    }
    assert {q for q, _ in got} == set(kept)
    for ours, theirs in (("HIT@10", "hits@10"), ("R@10", "recall@10"), ("nDCG@10", "ndcg@10"), ("MRR@10", "mrr@10")):
        ref = evaluate(qrels, run, theirs, return_mean=False)
        for q, v in zip(kept, ref):
            assert got[(q, ours)] == pytest.approx(min(v, 1.0) if ours == "HIT@10" else v, abs=1e-9)
    excluded = built.execute("""select reason, n_queries from evaluation_exclusions
                                where corpus = 'scifact' order by reason""").fetchall()
    assert excluded == [("no_relevant_qrels", 1), ("scored", 2)]


def _reference_metrics(con) -> dict[tuple, float]:
    """Every span metric recomputed from runs/chunks/prefixes/evidence with the kernels."""
    chunks = {
        r[0]: r[1:]
        for r in con.execute(
            "select chunk_id, doc_id, char_start, char_end, content_tokens, chunkset from chunks"
        ).fetchall()
    }
    prefix = {
        (r[0], r[1], r[2]): r[3]
        for r in con.execute("select chunk_id, prefix_kind, depth, prefix_tokens from chunk_prefixes").fetchall()
    }
    by_doc = defaultdict(list)
    for cid, (doc, s, e, _, cs) in chunks.items():
        by_doc[(cs, doc)].append((s, e))
    spans = defaultdict(list)
    for q, s, e in con.execute(
        "select query_id, char_start, char_end from evidence order by query_id, span_idx"
    ).fetchall():
        spans[q].append((s, e))
    qdoc = dict(con.execute("select query_id, doc_id from queries").fetchall())
    ranked = defaultdict(list)
    for key in con.execute("""select corpus, embedder, reranker, condition, query_id, chunk_id, score
                              from runs where corpus = 'qasper' order by corpus, embedder, reranker, condition, query_id, rank""").fetchall():
        ranked[key[:5]].append((key[5], key[6]))
    keys, rows = [], defaultdict(list)
    for key, items in ranked.items():
        q, cond = key[4], key[3]
        chunkset, kind, depth, _ = CONDITIONS[cond]
        sp = spans.get(q)
        if not sp or any(e > 10_000 for _, e in sp) or any(np.isnan(sc) for _, sc in items):
            continue
        iv, tok, rel = [], [], []
        for cid, _ in items:
            doc, s, e, ct, _ = chunks[cid]
            same = doc == qdoc[q]
            iv.append((s, e) if same else (0, 0))
            tok.append(ct + (prefix[(cid, kind, depth)] if kind != "none" else 0))
            rel.append(same and _relevant(s, e, sp))
        pool = sorted(by_doc[(chunkset, qdoc[q])])
        keys.append(key)
        rows["rs"].append([a for a, _ in iv])
        rows["re"].append([b for _, b in iv])
        rows["ss"].append([a for a, _ in sp])
        rows["se"].append([b for _, b in sp])
        rows["ps"].append([a for a, _ in pool])
        rows["pe"].append([b for _, b in pool])
        rows["tok"].append(tok)
        rows["rel"].append(rel)
        rows["nrel"].append(sum(_relevant(s, e, sp) for s, e in pool))
    r = rows
    out = {
        "cov-nDCG@10": cov_ndcg(r["rs"], r["re"], r["ss"], r["se"], r["ps"], r["pe"], 10),
        "R@50": span_recall(r["rs"], r["re"], r["ss"], r["se"], 50),
        "MRR": mrr(r["rel"]),
        "nDCG@10": ndcg_binary(r["rel"], r["nrel"], 10),
    }
    for b in (512, 1024, 2048):
        out[f"TBC@{b}"] = token_budget_coverage(r["rs"], r["re"], r["tok"], r["ss"], r["se"], b)
    return {(*k, m): float(v[i]) for m, v in out.items() for i, k in enumerate(keys)}


def _relevant(s, e, spans):
    return any((ov := min(e, se) - max(s, ss)) > 0 and (2 * ov >= se - ss or 5 * ov >= 4 * (e - s)) for ss, se in spans)


def test_query_metrics_equal_python_kernels(built):
    ref = _reference_metrics(built)
    got = {
        r[:6]: r[6]
        for r in built.execute(
            "select corpus, embedder, reranker, condition, query_id, metric, value from query_metrics "
            "where corpus = 'qasper'"
        ).fetchall()
    }
    assert set(got) == set(ref)
    diff = max(abs(got[k] - ref[k]) for k in ref)
    assert diff < 1e-12


def test_exclusions_are_counted(built):
    rows = dict(
        ((c, r), n)
        for c, r, n in built.execute(
            "select condition, reason, n_queries from evaluation_exclusions where condition in ('A3', 'A1')"
        ).fetchall()
    )
    assert rows[("A3", "no_evidence")] == 1
    assert rows[("A3", "span_outside_document")] == 1
    assert rows[("A3", "nan_score")] == 1
    assert rows[("A3", "scored")] == SCALE.n_queries - 3
    assert rows[("A1", "scored")] == SCALE.n_queries - 2 - 3
    pairing = built.execute("""select n_treatment, n_control, n_paired, n_only_treatment, n_only_control
                               from contrast_pairing where contrast = 'C1' and metric = 'cov-nDCG@10'""").fetchone()
    # C1 = A3 - A1: A3 lost the NaN query, A1 lost three others
    assert pairing == (SCALE.n_queries - 3, SCALE.n_queries - 5, SCALE.n_queries - 6, 3, 1)


def test_contrasts_equal_bootstrap_holm_dz_and_mixedlm(built):
    metrics = {
        r[:2]: r[2:]
        for r in built.execute(
            "select condition, query_id, value, doc_id from query_metrics where metric = 'cov-nDCG@10'"
        ).fetchall()
    }
    family = built.execute("select contrast, treatment, control from contrast_family order by contrast").fetchall()
    results = {}
    for contrast, t, c in family:
        qs = sorted({q for cond, q in metrics if cond == t} & {q for cond, q in metrics if cond == c})
        deltas = [metrics[(t, q)][0] - metrics[(c, q)][0] for q in qs]
        docs = [metrics[(t, q)][1] for q in qs]
        results[contrast] = (cluster_bootstrap(deltas, docs, B, SEED), cohens_dz(deltas), qs, docs, t, c)
    adjusted = dict(zip(sorted(results), holm([results[k][0].p_value for k in sorted(results)])))
    got = built.execute("""select contrast, n_queries, n_docs, mean_delta, ci_low, ci_high, p_value, p_holm, dz, is_primary
                           from contrasts where metric = 'cov-nDCG@10' order by contrast""").fetchall()
    assert [g[0] for g in got] == sorted(results)
    sizes = built.execute("select distinct family_size from contrasts where metric = 'cov-nDCG@10'").fetchall()
    assert sizes == [(len(results),)]
    for contrast, n, n_docs, mean, lo, hi, p, p_holm, dz, primary in got:
        ref, ref_dz = results[contrast][:2]
        assert (n, n_docs) == (ref.n, ref.n_clusters)
        assert mean == pytest.approx(ref.estimate, abs=1e-12)
        assert (lo, hi) == pytest.approx((ref.ci_low, ref.ci_high), abs=1e-12)
        assert p == ref.p_value and p_holm == pytest.approx(adjusted[contrast], abs=1e-12)
        assert dz == pytest.approx(ref_dz, abs=1e-12) and primary
    mixed = {
        r[0]: r[1:]
        for r in built.execute("select contrast, mixed_coef, mixed_p_value, mde from primary_contrasts").fetchall()
    }
    contrast = "C1"
    _, _, qs, docs, t, c = results[contrast]
    ref = mixedlm_contrast(
        [metrics[(t, q)][0] for q in qs] + [metrics[(c, q)][0] for q in qs],
        [True] * len(qs) + [False] * len(qs),
        docs + docs,
    )
    assert mixed[contrast][0] == pytest.approx(ref.coef, abs=1e-10)
    assert mixed[contrast][1] == pytest.approx(ref.p_value, abs=1e-8)
    assert mixed[contrast][2] == pytest.approx(2.801585 * results[contrast][0].se, rel=1e-6)


def test_exploratory_marts(built):
    means = built.execute("""select mean_value, ci_low, ci_high, n_docs from condition_means
                             where corpus = 'qasper' and condition = 'G3' and metric = 'R@50'""").fetchone()
    values = built.execute("""select value, doc_id from query_metrics where corpus = 'qasper' and condition = 'G3'
                              and metric = 'R@50' order by doc_id, query_id""").fetchall()
    assert means[0] == pytest.approx(np.mean([v for v, _ in values]))
    ref = cluster_bootstrap([v for v, _ in values], [d for _, d in values], B, SEED)  # the contrasts' kernel, B, seed
    assert (means[1], means[2], means[3]) == (
        pytest.approx(ref.ci_low, abs=1e-12),
        pytest.approx(ref.ci_high, abs=1e-12),
        ref.n_clusters,
    )
    dose = built.execute(
        "select n_levels, n_queries, n_dropped, slope from dose_response where family = 'induced'"
    ).fetchone()
    per_query = built.execute("""
        select regr_slope(value, case condition when 'A2' then 0 when 'A3-d1' then 1 when 'A3-d2' then 2 else 3 end)
        from query_metrics where metric = 'cov-nDCG@10' and condition in ('A2', 'A3-d1', 'A3-d2', 'A3')
        group by query_id having count(*) = 4""").fetchall()
    assert dose[:3] == (4, len(per_query), 1)  # the NaN-score query lacks A3
    assert dose[3] == pytest.approx(np.mean([s for (s,) in per_query]), abs=1e-12)
    cuts = built.execute(
        "select sum(n_queries) from metric_cuts where cut = 'query_type' and condition = 'G2' and metric = 'MRR'"
    ).fetchone()[0]
    assert cuts == SCALE.n_queries - 2
    recall = built.execute("select n_queries, n_judged from section_recall_summary where condition = 'A4'").fetchone()
    assert recall == (SCALE.n_queries, SCALE.n_queries)


def test_dose_response_is_bit_identical_on_rebuild(built, tmp_path):
    before = built.execute("select * from dose_response order by all").fetchall()
    run_dbt("run", built_path(built), select="dose_response", vars=VARS, extra=["--target-path", str(tmp_path)])
    assert built.execute("select * from dose_response order by all").fetchall() == before


def test_a_run_chunk_its_condition_does_not_index_is_an_error_naming_it(built, tmp_path):
    # runs last in this module: it breaks the warehouse on purpose
    from warehouse.dbt import DbtError

    built.execute("""update runs set chunk_id = 'fixed|qasper/d00000|0'
                     where condition = 'A3' and query_id = 'qasper/q00001' and rank = 2""")
    with pytest.raises(DbtError, match=r"A3 ranks chunk fixed\|qasper/d00000\|0 for qasper/q00001"):
        run_dbt("run", built_path(built), select="int_query_metrics", vars=VARS, extra=["--target-path", str(tmp_path)])


def built_path(con) -> str:
    return con.execute("select path from duckdb_databases() where database_name = current_database()").fetchone()[0]
