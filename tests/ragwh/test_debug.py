"""``ragwh debug`` (every check, one line each, exit 1 when one would make the run fail) and the cheap checks
``ragwh run`` performs before its first stage."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest
import yaml
from typer.testing import CliRunner

from ragwh.cli import app
from ragwh.experiment import checks
from warehouse.paths import PROJECT_ROOT


@pytest.fixture()
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for var in (
        "RAGWH_WORKDIR",
        "RAGWH_WAREHOUSE",
        "RAGWH_DATA",
        "RAGWH_LLM_BACKEND",
        "RAGWH_LLM_BASE_URL",
        "RAGWH_LLM_REPLAY_ONLY",
        "RAGWH_LLM_MODEL",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("RAGWH_WORKDIR", "")  # restored after the test (--workdir sets it)
    return tmp_path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: nothing listens there


def test_debug_on_the_demo_prints_only_passed_checks_and_exits_0(here):
    result = CliRunner().invoke(app, ["debug"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    names = [line.split(":")[0][2:] for line in lines[1:-1]]
    assert names == [
        "python",
        "torch",
        "device",
        "dbt project",
        "workdir",
        "warehouse",
        "data demo",
        "disk",
        "memory",
        "embedder all-MiniLM-L6-v2",
        "llm",
    ], lines
    assert all(line.startswith("✓ ") for line in lines[1:-1]) and lines[-1] == "all checks passed"
    assert list(here.iterdir()) == []  # nothing created (no warehouse, no folder, no probe file left)


def test_an_llm_base_url_on_a_closed_port_is_named_and_fails_debug_and_run_before_any_stage(here):
    raw = yaml.safe_load((PROJECT_ROOT / "experiments" / "demo-rewriting.yml").read_text())
    raw["llm"] = {"backend": "openai", "base_url": f"http://127.0.0.1:{_closed_port()}/v1", "model": "m"}
    (here / "closed.yml").write_text(yaml.safe_dump(raw))
    debug = CliRunner().invoke(app, ["debug", "--config", "closed.yml"])
    assert debug.exit_code == 1
    failed = [line for line in debug.output.splitlines() if line.startswith("✗")]
    assert len(failed) == 1 and failed[0].startswith("✗ llm: openai backend at http://127.0.0.1:"), debug.output
    assert "Connection refused" in failed[0] and debug.output.strip().endswith("would make the run fail: llm")
    run = CliRunner().invoke(app, ["run", "--config", "closed.yml"])
    assert run.exit_code == 1 and run.output.startswith("run failed: llm: openai backend at"), run.output
    assert len(run.output.strip().splitlines()) == 1 and not (here / "warehouse").exists()


def test_an_unwritable_working_directory_fails_before_any_stage(here):
    (here / "a-file").write_text("")
    workdir = here / "a-file" / "out"  # under a regular file: unwritable for root too
    debug = CliRunner().invoke(app, ["debug", "--workdir", str(workdir)])
    assert debug.exit_code == 1 and f"✗ workdir: {workdir} is not writable" in debug.output
    run = CliRunner().invoke(app, ["run", "--workdir", str(workdir), "--limit", "1"])
    assert run.exit_code == 1, run.output
    assert run.output.startswith(f"run failed: workdir: {workdir} is not writable"), run.output
    assert "stage" not in run.output and "DEMO" not in run.output  # no stage ran, no banner was printed


def test_a_hub_model_not_in_the_cache_warns_and_fails_when_the_hub_is_off(here, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(here / "empty-cache"))
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(here / "empty-cache"))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    warned = checks.model_check("reranker", "BAAI/bge-reranker-v2-m3")
    assert warned.status == checks.WARN and "not in the local Hugging Face cache" in warned.detail
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert checks.model_check("reranker", "BAAI/bge-reranker-v2-m3").failed
    assert checks.model_check("embedder", "all-MiniLM-L6-v2").status == checks.OK
    assert checks.model_check("embedder", "no-such-model").failed


def test_the_disk_estimate_follows_its_documented_formula(tmp_path):
    source = tmp_path / "corpus.json"
    source.write_bytes(b"x" * 600_000)
    chunking = SimpleNamespace()
    assert checks.disk_estimate(chunking, [source]) == 16 * 2**20 + 60 * 600_000
    settings = SimpleNamespace(dense="hnsw", seeds=(1, 2, 3), ann_graphs=4, strategies=("S1", "S1-ann4"), ann_m=16)
    rewriting = SimpleNamespace(settings=settings, embedder="all-MiniLM-L6-v2")
    graph = 1000 * (4 * 384 + 8 * 16 + 64)  # 1,000 chunks of 600 bytes, 12 graphs
    assert checks.disk_estimate(rewriting, [source]) == 16 * 2**20 + 60 * 600_000 + 12 * graph
    assert checks.disk_check(tmp_path, 1 << 62).failed and not checks.disk_check(tmp_path / "new", 1).failed
