"""Names in console output are printed as they are, never read as Rich markup
("stage ingest [qasper] failed" used to print as "stage ingest  failed")."""

from __future__ import annotations

import json
import shutil

from tests.reliability.cli import DEMO_FILE, ragwh


def _bad_config(tmp_path, corpus: str):
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "broken.json").write_text("{not json")
    config = tmp_path / "c.yml"
    config.write_text(
        json.dumps(
            {
                "name": "[exp]",
                "corpora": [{"name": corpus, "loader": "qasper", "sources": ["broken.json"]}],
                "embedders": [{"model": "all-MiniLM-L6-v2", "strong": True}],
                "conditions": ["A3"],
                "contrasts": [],
            }
        )
    )
    return config


def test_failed_stage_keeps_its_bracketed_scope(tmp_path):
    result = ragwh(
        "run",
        "--config",
        _bad_config(tmp_path, "qasper"),
        "--data",
        tmp_path / "data",
        "--warehouse",
        tmp_path / "w.duckdb",
    )
    assert result.exit_code == 1
    assert "run failed: stage ingest [qasper] failed: IngestError: " in result.output
    assert "> ingest [qasper]" in result.output


def test_bracketed_paths_and_corpus_names_survive(tmp_path):
    folder = tmp_path / "[v2]"
    folder.mkdir()
    bad = folder / "bad.json"
    bad.write_text("{not json")
    wh = tmp_path / "w.duckdb"
    failed = ragwh("ingest", "qasper", bad, "--warehouse", wh)
    assert failed.exit_code == 1 and f"{bad}, record line 1: malformed JSON" in failed.output

    good = folder / "[demo].json"
    shutil.copy(DEMO_FILE, good)
    loaded = ragwh("ingest", "qasper", good, "--corpus", "[demo]", "--warehouse", wh)
    assert loaded.exit_code == 0, loaded.output
    assert "corpus '[demo]'" in loaded.output

    chunked = ragwh("chunk", "--corpus", "[demo]", "--warehouse", wh)
    assert chunked.exit_code == 0, chunked.output
    assert "[demo]: mean fixed" in chunked.output and "│ [demo] " in chunked.output

    model = tmp_path / "[models]" / "none"
    embedded = ragwh("embed", "--embedder", model, "--warehouse", wh)
    assert embedded.exit_code == 1 and "[models]" in embedded.output
