"""A warehouse that cannot be opened (another writer holds it; it is a
directory, an empty file, not DuckDB, or missing) gives every command one line naming the file and
what to do; no failing command creates the warehouse file."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.reliability.cli import DEMO_FILE, Holder, one_line, ragwh
from tests.reliability.compare import warehouse_differences

# every command that opens the warehouse, with arguments that get it as far as opening it
COMMANDS = {
    "ingest qasper": ["ingest", "qasper", str(DEMO_FILE), "--corpus", "demo"],
    "ingest wikipedia": ["ingest", "wikipedia", "pages.jsonl"],
    "ingest beir": ["ingest", "beir", "beir_dir"],
    "ingest hotpotqa": ["ingest", "hotpotqa", "hotpot.json"],
    "run": ["run"],
    "chunk": ["chunk"],
    "induce": ["induce"],
    "embed": ["embed"],
    "retrieve": ["retrieve"],
    "rerank": ["rerank"],
    "contexts": ["contexts"],
    "generate-queries": ["generate-queries"],
    "report": ["report"],
    "export trec": ["export", "trec", "--condition", "A3"],
}
CREATING = {"ingest qasper", "ingest wikipedia", "ingest beir", "ingest hotpotqa", "run"}


def _args(name: str, warehouse, tmp_path) -> list[str]:
    extra = {
        "run": ["--report", str(tmp_path / "r.html")],
        "report": ["--out", str(tmp_path / "r.html")],
        "export trec": ["--out", str(tmp_path / "trec")],
    }.get(name, [])
    return [*COMMANDS[name], *extra, "--warehouse", str(warehouse)]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    path = tmp_path_factory.mktemp("held") / "demo.duckdb"
    assert ragwh("ingest", "qasper", DEMO_FILE, "--corpus", "demo", "--warehouse", path).exit_code == 0
    return path


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_second_writer_gets_one_line_and_the_warehouse_is_unchanged(name, loaded, tmp_path):
    path = tmp_path / "held.duckdb"
    shutil.copy(loaded, path)
    with Holder(path) as holder:
        result = ragwh(*_args(name, path, tmp_path))
    assert result.exit_code == 1
    assert one_line(result) == (
        f"error: warehouse {path} is in use by another process (PID {holder.pid}): "
        "wait for it to finish, or pass another --warehouse FILE"
    )
    assert warehouse_differences(loaded, path) == {}


@pytest.mark.parametrize("kind", ["empty", "junk", "directory"])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_unusable_warehouse_path_gets_one_line_and_is_left_alone(name, kind, tmp_path):
    path = tmp_path / "wh.duckdb"
    if kind == "directory":
        path.mkdir()
    else:
        path.write_bytes(b"" if kind == "empty" else b"SQLite format 3\0" * 100)
    before = None if kind == "directory" else path.read_bytes()
    result = ragwh(*_args(name, path, tmp_path))
    assert result.exit_code == 1
    line = one_line(result)
    assert line.startswith(f"error: warehouse {path} is ") and "--warehouse" in line
    assert (path.is_dir() and not any(path.iterdir())) if kind == "directory" else path.read_bytes() == before


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - CREATING))
def test_missing_warehouse_is_reported_and_not_created(name, tmp_path):
    path = tmp_path / "none.duckdb"
    result = ragwh(*_args(name, path, tmp_path))
    assert result.exit_code == 1
    assert one_line(result) == (
        f"error: no warehouse at {path}: build one first (`ragwh run`, or `ragwh ingest ...`), or pass --warehouse FILE"
    )
    assert not path.exists()


@pytest.mark.parametrize("name", sorted(CREATING - {"run"}))
def test_failed_load_creates_no_warehouse(name, tmp_path):
    """The input files do not exist: the load fails after the warehouse was opened."""
    path = tmp_path / "new.duckdb"
    args = _args(name, path, tmp_path)
    args[2] = str(tmp_path / "missing-input")  # the file / directory argument
    result = ragwh(*args)
    assert result.exit_code == 1 and "missing-input" in result.output
    assert not path.exists() and not (tmp_path / "new.duckdb.wal").exists()


def test_failed_run_creates_no_warehouse(tmp_path):
    bad = tmp_path / "data" / "bad.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    config = tmp_path / "bad.yml"
    config.write_text(
        json.dumps(
            {
                "name": "bad",
                "corpora": [{"name": "bad", "loader": "qasper", "sources": ["bad.json"]}],
                "embedders": [{"model": "all-MiniLM-L6-v2", "strong": True}],
                "conditions": ["A3"],
                "contrasts": [],
            }
        )
    )
    path = tmp_path / "new.duckdb"
    result = ragwh("run", "--config", config, "--data", bad.parent, "--warehouse", path)
    assert result.exit_code == 1 and "bad.json" in result.output
    assert not path.exists()
