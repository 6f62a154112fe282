"""Running ``ragwh`` for the reliability suite: in-process (CliRunner) and as a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from ragwh.cli import app
from warehouse.paths import CODE_ROOT

DEMO_FILE = CODE_ROOT / "ragwh" / "experiment" / "demo" / "demo.v0.3-format.json"
HOLDER = "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); sys.stdin.read()"


def ragwh(*args: str | Path, env: dict[str, str] | None = None):
    """``ragwh ARGS`` in this process; returns click's Result (``output`` = stdout and stderr)."""
    return CliRunner().invoke(app, [str(a) for a in args], env=env)


def one_line(result) -> str:
    """The command's whole output, asserted to be exactly one line (no traceback, no wrapping)."""
    text = result.output.strip()
    assert text and "\n" not in text and "Traceback" not in text, result.output
    return text


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for a ``ragwh`` subprocess: this checkout first on the path, offline."""
    env = {
        **os.environ,
        "PYTHONPATH": str(CODE_ROOT),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "COLUMNS": "160",
    }
    env.pop("RAGWH_WAREHOUSE", None)
    return {**env, **extra}


class Holder:
    """A second process holding the warehouse open (DuckDB's file lock) until closed."""

    def __init__(self, path: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "ready"
        self.pid = self.proc.pid

    def __enter__(self) -> "Holder":
        return self

    def __exit__(self, *exc) -> None:
        self.proc.communicate("")
