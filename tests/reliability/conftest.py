"""Session fixtures of the reliability suite: one clean ``ragwh run`` of the demo experiment, and a
base warehouse holding it plus a tiny corpus of every other loader. Tests copy them, never edit them."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.reliability.cli import ragwh
from tests.reliability.inputs import base_loads, rewriting_loads


def clean_report(clean_demo: Path) -> Path:
    """The report file of the clean run: reruns that should equal it write the same file (its path
    is an input of the report stage)."""
    return clean_demo.parent / "report.html"


@pytest.fixture(scope="session")
def clean_demo(tmp_path_factory) -> Path:
    """The warehouse of one uninterrupted ``ragwh run`` (the demo) from an empty file."""
    path = tmp_path_factory.mktemp("clean_demo") / "clean.duckdb"
    result = ragwh("run", "--warehouse", path, "--report", clean_report(path))
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="session")
def base(clean_demo, tmp_path_factory) -> Path:
    """The clean demo run plus the tiny BEIR ('mini'), HotpotQA ('hp') and Wikipedia ('wiki') corpora."""
    folder = tmp_path_factory.mktemp("base")
    path = folder / "base.duckdb"
    shutil.copy(clean_demo, path)
    for args in base_loads(folder):
        result = ragwh("ingest", *args, "--warehouse", path)
        assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="session")
def base_rewriting(base, tmp_path_factory) -> Path:
    """The base warehouse plus the tiny EnterpriseRAG-Bench ('erb') and AmbigNQ ('anq') corpora."""
    folder = tmp_path_factory.mktemp("base_rewriting")
    path = folder / "base_rewriting.duckdb"
    shutil.copy(base, path)
    for args in rewriting_loads(folder):
        result = ragwh("ingest", *args, "--warehouse", path)
        assert result.exit_code == 0, result.output
    return path


@pytest.fixture()
def copy_of(tmp_path):
    """``copy_of(source)`` -> a fresh copy of a session warehouse for one test to change."""
    def make(source: Path) -> Path:
        target = tmp_path / source.name
        shutil.copy(source, target)
        return target
    return make
