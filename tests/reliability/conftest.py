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


def _copy_with_loads(source: Path, tmp_path_factory, name: str, loads) -> Path:
    """A copy of warehouse ``source`` named ``name`` with the ``ragwh ingest`` argument lists of
    ``loads(folder)`` applied to it (each must succeed)."""
    folder = tmp_path_factory.mktemp(name)
    path = folder / f"{name}.duckdb"
    shutil.copy(source, path)
    for args in loads(folder):
        result = ragwh("ingest", *args, "--warehouse", path)
        assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="session")
def base(clean_demo, tmp_path_factory) -> Path:
    """The clean demo run plus the tiny BEIR ('mini'), HotpotQA ('hp') and Wikipedia ('wiki') corpora."""
    return _copy_with_loads(clean_demo, tmp_path_factory, "base", base_loads)


@pytest.fixture(scope="session")
def base_rewriting(base, tmp_path_factory) -> Path:
    """The base warehouse plus the tiny EnterpriseRAG-Bench ('erb') and AmbigNQ ('anq') corpora."""
    return _copy_with_loads(base, tmp_path_factory, "base_rewriting", rewriting_loads)


@pytest.fixture()
def copy_of(tmp_path):
    """``copy_of(source)`` -> a fresh copy of a session warehouse for one test to change."""

    def make(source: Path) -> Path:
        target = tmp_path / source.name
        shutil.copy(source, target)
        return target

    return make
