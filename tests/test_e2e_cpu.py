"""End to end: the CPU experiment on 10 shared QASPER papers through ``ragwh run``, then a no-op rerun,
the marts, the report and a TREC export re-scored with ranx."""

from __future__ import annotations

import re
import time

import duckdb
import yaml
from typer.testing import CliRunner

from ragwh.cli import app
from warehouse.paths import PROJECT_ROOT

N_PAPERS = 10  # the experiment's whole path at a CI-sized cut (benchmarks/ run it on all 255 papers)
CONDITIONS = ["A0", "A2", "A3-d1", "A3-d2", "A3", "A4", "G2", "G3-d1", "G3-d2", "G3", "G4", "P"]  # cpu.yml's


def _config(tmp_path):
    raw = yaml.safe_load((PROJECT_ROOT / "experiments" / "cpu.yml").read_text())
    raw["limit"] = N_PAPERS
    raw["bootstrap"]["B"] = 1000
    path = tmp_path / "cpu20.yml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_cpu_experiment_on_qasper_papers(shared_data, tmp_path, monkeypatch):
    warehouse = tmp_path / "e2e.duckdb"
    report = tmp_path / "report.html"
    monkeypatch.setenv("RAGWH_DATA", str(shared_data))
    monkeypatch.setenv("RAGWH_WAREHOUSE", str(warehouse))
    args = ["run", "--config", str(_config(tmp_path)), "--report", str(report)]
    runner = CliRunner()

    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "primary cell" in first.output and "DEMO NUMBERS" not in first.output
    assert "A1" in first.output and "not run" in first.output  # reported, with its reason

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM documents WHERE corpus = 'qasper'").fetchone()[0] == N_PAPERS
        conditions = {r[0] for r in con.execute("SELECT DISTINCT condition FROM query_metrics").fetchall()}
        assert conditions == set(CONDITIONS)
        n_queries = con.execute("SELECT count(*) FROM queries").fetchone()[0]
        per_condition = con.execute(
            "SELECT condition, count(DISTINCT query_id) FROM query_metrics WHERE metric = 'cov-nDCG@10' GROUP BY 1"
        ).fetchall()
        assert n_queries > 0 and all(n == n_queries for _, n in per_condition), (n_queries, per_condition)
        primary = con.execute(
            "SELECT contrast, n_queries, mean_delta, ci_low, ci_high, p_value, p_holm FROM contrasts "
            "WHERE is_primary ORDER BY contrast"
        ).fetchall()
        assert [r[0] for r in primary] == ["C2", "C3", "C4"]
        for contrast, n, mean, lo, hi, p, p_holm in primary:
            assert n == n_queries and lo <= mean <= hi and 0 <= p <= p_holm <= 1, contrast
        assert con.execute("SELECT count(*) FROM section_recall_summary").fetchone()[0] == 2  # A4, G4
    finally:
        con.close()

    page = report.read_text(encoding="utf-8")
    start = page.index('<section id="slices">')
    slices, rest = page[start : page.index("</section>", start)], page[:start] + page[page.index("</section>", start) :]
    assert rest.count("<img") == 5 and "★ C2" in rest and "not run" in rest  # forest, dose, budget, funnel, sizes
    # the slices section: one forest plot per primary contrast and label
    with duckdb.connect(str(warehouse), read_only=True) as con:
        pairs = con.execute(
            "SELECT count(DISTINCT (contrast, label)) FROM contrast_slices WHERE is_primary_cell"
        ).fetchone()[0]
    assert pairs >= 3 * 3 and slices.count("<img") == pairs
    assert 'src="http' not in page  # self-contained

    # nothing changed: every stage is skipped, nothing is embedded, retrieved or built
    started = time.perf_counter()
    second = runner.invoke(app, args)
    seconds = time.perf_counter() - started
    assert second.exit_code == 0, second.output
    assert "nothing changed since the last run" in second.output
    assert not re.search(r"^> ", second.output, flags=re.M), second.output
    assert seconds < 30, seconds

    # a TREC export of G3 re-scored by ranx equals the mart's binary nDCG@10 (chunk-level qrels)
    from ranx import Qrels, Run, evaluate

    out = tmp_path / "trec"
    con = duckdb.connect(str(warehouse), read_only=True)
    try:  # the experiment ran two systems over G3 (MiniLM and BM25): export the dense one
        ((dense,),) = con.execute("SELECT DISTINCT embedder FROM run_manifest WHERE system_kind = 'dense'").fetchall()
    finally:
        con.close()
    exported = runner.invoke(app, ["export", "trec", "--condition", "G3", "--embedder", dense, "--out", str(out)])
    assert exported.exit_code == 0, exported.output
    run = Run.from_file(str(next(out.glob("*.run"))), kind="trec")
    (binary,) = [p for p in out.glob("*.qrels") if not p.name.endswith(".cov.qrels")]  # not the graded coverage qrels
    qrels = Qrels.from_file(str(binary), kind="trec")
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        mart = dict(
            con.execute(
                "SELECT query_id, value FROM query_metrics WHERE condition = 'G3' AND metric = 'nDCG@10' AND embedder = ?",
                [dense],
            ).fetchall()
        )
    finally:
        con.close()
    scored = {q: mart[q] for q in qrels.keys()}
    ours = sum(scored.values()) / len(scored)
    run_on_judged = Run({q: run.to_dict()[q] for q in scored})
    theirs = evaluate(qrels, run_on_judged, "ndcg@10")
    assert abs(ours - theirs) < 1e-9, (ours, theirs)
