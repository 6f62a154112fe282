"""Shared fixtures: a fresh warehouse per test and the path of the shared real data."""
from __future__ import annotations

from pathlib import Path

import pytest

from warehouse.paths import PROJECT_ROOT

SHARED_DATA = (PROJECT_ROOT.parent / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` from the project root (CI has it too). Missing data is a hard error."""
    if not SHARED_DATA.is_dir():
        raise FileNotFoundError(f"{SHARED_DATA} not found: tests read the real corpora from ../shared/data")
    return SHARED_DATA


@pytest.fixture()
def warehouse_file(tmp_path, monkeypatch) -> Path:
    """A fresh, empty warehouse file; RAGWH_WAREHOUSE points at it for the test's duration."""
    path = tmp_path / "test.duckdb"
    monkeypatch.setenv("RAGWH_WAREHOUSE", str(path))
    return path


@pytest.fixture()
def con(warehouse_file):
    from warehouse.db import connect

    connection = connect(warehouse_file)
    yield connection
    connection.close()
