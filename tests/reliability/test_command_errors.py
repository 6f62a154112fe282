"""Commands run too early say what to run first, in one line and with exit
status 1 (``retrieve`` / ``rerank`` printed the EmbedError as a traceback; ``chunk`` on an empty
warehouse exited 0 with no next step). Also: every module imports on its own (``generate-queries``
crashed with a circular ImportError)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.reliability.cli import one_line, ragwh
from warehouse.db import connect
from warehouse.paths import CODE_ROOT


@pytest.fixture()
def empty(tmp_path):
    path = tmp_path / "empty.duckdb"
    connect(path).close()
    return path


@pytest.mark.parametrize("command", ["embed", "retrieve", "rerank"])
def test_before_dbt_build_says_to_build(command, empty):
    result = ragwh(command, "--warehouse", empty)
    assert result.exit_code == 1
    assert one_line(result) == (
        f"{command} failed: the warehouse has no int_condition_texts model: load a corpus, then "
        "run `dbt build` (or `ragwh run`) before embedding or retrieving"
    )


def test_chunk_on_an_empty_warehouse_says_to_load(empty):
    result = ragwh("chunk", "--warehouse", empty)
    assert result.exit_code == 1
    assert one_line(result) == (
        "chunk failed, warehouse unchanged: warehouse: no documents to chunk "
        "(load a corpus first with `ragwh ingest ...`)"
    )


def test_generate_queries_on_an_empty_warehouse_says_to_load(empty):
    result = ragwh("generate-queries", "--warehouse", empty)
    assert result.exit_code == 1 and "Traceback" not in result.output and "ImportError" not in result.output
    assert one_line(result).startswith("generate-queries failed: ")


IMPORT_EACH_FIRST = """
import importlib, json, sys
failures = {}
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m.split(".")[0] in ("ingest", "warehouse", "udfs")]:
        sys.modules.pop(loaded)
    try:
        importlib.import_module(name)
    except ImportError as exc:
        failures[name] = str(exc)
print(json.dumps(failures))
"""


def test_every_module_imports_first():
    """Each module imported into an interpreter that has none of the project's modules loaded yet
    (a circular import only shows when its module is the first one imported), in a subprocess so
    this test's module reloading cannot leak into other tests."""
    modules = sorted(
        ".".join(p.relative_to(CODE_ROOT).with_suffix("").parts).removesuffix(".__init__")
        for package in ("ingest", "warehouse", "udfs")
        for p in (CODE_ROOT / package).rglob("*.py")
    )
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH_FIRST, *modules],
        capture_output=True,
        text=True,
        cwd=CODE_ROOT,
        env={**os.environ, "PYTHONPATH": str(CODE_ROOT)},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {}
