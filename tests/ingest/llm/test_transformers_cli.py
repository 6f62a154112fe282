"""`ragwh induce --inducer llm`, `ragwh contexts` and `ragwh generate-queries` offline, in-process, with the
real packaged tiny model (SmolLM2-135M via the transformers backend, configured by an experiment YAML), on
two hand-made articles and with short answer caps; a second pass of every command makes no generation.
What is asserted is the bookkeeping (calls stored with their backend and model, the stages' rows, the
tiny-model label, the cache), never what the model says."""

from __future__ import annotations

import duckdb
import yaml
from typer.testing import CliRunner

from ragwh.cli import app
from tests.ingest.llm.test_llm_stages_http import load_articles
from warehouse.db import connect

LABEL = "TINY-MODEL OUTPUT, NOT RESULTS"


def _calls(path) -> dict[str, tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {
            p: tuple(rest)
            for p, *rest in con.execute(
                "SELECT prompt_name, count(*), min(backend), max(backend), min(model), max(model) FROM llm_calls "
                "GROUP BY 1 ORDER BY 1"
            ).fetchall()
        }
    finally:
        con.close()


def test_the_three_llm_commands_run_with_the_packaged_model_and_rerun_from_the_cache(
    warehouse_file, tmp_path, monkeypatch
):
    for var in ("RAGWH_LLM_BACKEND", "RAGWH_LLM_BASE_URL", "RAGWH_LLM_MODEL", "RAGWH_LLM_REPLAY_ONLY"):
        monkeypatch.delenv(var, raising=False)
    con = connect(warehouse_file)
    load_articles(con, 2)
    con.close()
    config = tmp_path / "tiny.yml"
    config.write_text(
        yaml.safe_dump(
            {"llm": {"backend": "transformers", "model": "smollm2-135m-instruct", "transformers": {"threads": 1}}}
        )
    )
    commands = [
        ["induce", "--inducer", "llm", "--corpus", "wikipedia", "--max-tokens", "48"],
        ["contexts", "--corpus", "wikipedia", "--max-tokens", "16"],
        ["generate-queries", "--seed", "3", "--per-doc", "1"],
    ]
    runner = CliRunner()
    for args in commands:
        result = runner.invoke(app, args + ["--config", str(config)])
        assert result.exit_code == 0, result.output
        assert LABEL in result.output, args[0]

    calls = _calls(warehouse_file)
    assert {"induce_structure", "contextual_chunk"} <= {p.rsplit(".", 1)[0] for p in calls}
    assert {"query_factoid", "query_paraphrase"} <= {p.rsplit(".", 1)[0] for p in calls}
    assert {v[1:] for v in calls.values()} == {
        ("transformers", "transformers", "smollm2-135m-instruct", "smollm2-135m-instruct")
    }
    con = duckdb.connect(str(warehouse_file), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM induction_log WHERE structure = 'induced:llm'").fetchone()[0] == 2
        n_fixed, n_context = con.execute(
            "SELECT (SELECT count(*) FROM chunks WHERE chunkset = 'fixed'), "
            "(SELECT count(*) FROM chunk_prefixes WHERE prefix_kind = 'llm_context')"
        ).fetchone()
        assert n_fixed > 0 and n_context == n_fixed  # cut answers (16 tokens) are kept and counted, not dropped
    finally:
        con.close()

    n_induce = sum(v[0] for p, v in calls.items() if p.startswith("induce_"))
    reruns = []
    for args in commands:  # the cache answers every request: llm_calls stays as it was
        result = runner.invoke(app, args + ["--config", str(config)])
        assert result.exit_code == 0, result.output
        reruns.append(" ".join(result.output.split()))
    assert _calls(warehouse_file) == calls
    assert f"via transformers: 0 calls, {n_induce} cache hits" in reruns[0], reruns[0]
    result = runner.invoke(
        app,
        [
            "induce",
            "--inducer",
            "llm",
            "--replay-only",
            "--no-chunk",
            "--corpus",
            "wikipedia",
            "--max-tokens",
            "48",
            "--config",
            str(config),
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"via replay: 0 calls, {n_induce} cache hits" in " ".join(result.output.split()), result.output
