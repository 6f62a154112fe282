"""Session fixtures of the reliability suite: one clean ``ragwh run`` of the demo experiment, and a
base warehouse holding it plus a tiny corpus of every other loader. Tests copy them, never edit them."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.reliability.cli import ragwh
from tests.reliability.inputs import base_loads


@pytest.fixture(scope="session")
def clean_demo(tmp_path_factory) -> Path:
    """The warehouse of one uninterrupted ``ragwh run`` (the demo) from an empty file."""
    folder = tmp_path_factory.mktemp("clean_demo")
    path = folder / "clean.duckdb"
    result = ragwh("run", "--warehouse", path, "--report", folder / "report.html")
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


@pytest.fixture()
def copy_of(tmp_path):
    """``copy_of(source)`` -> a fresh copy of a session warehouse for one test to change."""
    def make(source: Path) -> Path:
        target = tmp_path / source.name
        shutil.copy(source, target)
        return target
    return make
