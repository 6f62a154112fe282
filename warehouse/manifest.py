"""Stage fingerprints and the ``stage_manifest`` table that makes ``ragwh run`` resumable.

A stage's fingerprint is ``sha256`` over a list of strings describing its inputs: source file
digests, config values, upstream table digests, project file digests. When a stage finishes, the
digest of its output rows (:func:`output_digest`) is stored with it. A stage is skipped only when
its fingerprint equals the one stored for its ``(stage, scope)`` *and* its output rows still digest
to what was stored (so output replaced, edited or wiped since makes it run again); a stage that
fails stores nothing, so the next run redoes it (the stages themselves write atomically).

Table digest (:func:`table_digest`): ``count(*)`` and the order-independent ``sum(hash(row))`` as
HUGEINT over the rows of a table (optionally filtered), i.e. ``Σ_r hash(r) mod 2^64`` summed
without overflow — any inserted, deleted or changed row changes it (up to 64-bit hash collisions).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import duckdb

from warehouse.db import transaction
from warehouse.paths import CODE_ROOT, PROJECT_ROOT

#: What a dbt build depends on besides the warehouse: every project file dbt reads (under the dbt project)
#: and the kernels its profile registers (under the code root; the same directory in a checkout).
DBT_PROJECT_GLOBS = (
    "models/**/*",
    "seeds/**/*",
    "macros/**/*",
    "tests/dbt/**/*",
    "analyses/**/*",
    "dbt_project.yml",
    "profiles.yml",
)
DBT_CODE_GLOBS = ("udfs/**/*.py",)


def sha256_parts(parts: list[str]) -> str:
    """``sha256`` hex of the parts joined by NUL (a part cannot run into the next)."""
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def file_digest(path: Path) -> str:
    """``sha256`` hex of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _matching(root: Path, globs: tuple[str, ...], exclude: tuple[str, ...]) -> dict[Path, Path]:
    """Relative path -> file for every file under ``root`` the ``globs`` match, less ``exclude``."""
    return {
        p.relative_to(root): p
        for g in globs
        for p in root.glob(g)
        if p.is_file() and "__pycache__" not in p.parts and str(p.relative_to(root)) not in exclude
    }


def project_digest(
    root: Path | None = None, globs: tuple[str, ...] = DBT_PROJECT_GLOBS, exclude: tuple[str, ...] = ()
) -> str:
    """Digest over the relative path and bytes of every file the ``globs`` match under ``root``, sorted
    by relative path, leaving out the relative paths in ``exclude``. With no ``root``: the dbt build's
    files (:data:`DBT_PROJECT_GLOBS` under the dbt project, :data:`DBT_CODE_GLOBS` under the code root),
    so a checkout and an installed wheel of the same code digest alike."""
    if root is None:
        files = {**_matching(CODE_ROOT, DBT_CODE_GLOBS, exclude), **_matching(PROJECT_ROOT, globs, exclude)}
    else:
        files = _matching(root, globs, exclude)
    return sha256_parts([f"{rel}={file_digest(files[rel])}" for rel in sorted(files)])


def table_digest(
    con: duckdb.DuckDBPyConnection,
    table: str,
    where: str = "TRUE",
    params: list | None = None,
    columns: tuple[str, ...] | None = None,
) -> str:
    """``'<rows>:<Σ hash(row)>'`` of ``table`` restricted to ``where`` (see module docstring), the
    hash taken over ``columns`` only when given; ``'absent'`` when the relation does not exist."""
    exists = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'main' AND table_name = ?", [table]
    ).fetchone()[0]
    if not exists:
        return "absent"
    row = "t" if columns is None else ", ".join(f't."{c}"' for c in columns)
    n, total = con.execute(
        f"SELECT count(*), coalesce(sum(hash({row})::HUGEINT), 0) FROM {table} AS t WHERE {where}", list(params or [])
    ).fetchone()
    return f"{n}:{total}"


def output_digest(con: duckdb.DuckDBPyConnection, outputs) -> str:
    """``sha256`` over the :func:`table_digest` of each output (objects with ``table``, ``where``,
    ``params``, ``columns``; see ``ragwh.experiment.pipeline.outputs``); ``''`` when there are none."""
    if not outputs:
        return ""
    return sha256_parts(
        [
            f"{o.table}[{o.where}|{o.params}|{o.columns}]="
            f"{table_digest(con, o.table, o.where, list(o.params), o.columns)}"
            for o in outputs
        ]
    )


def stored_fingerprint(con: duckdb.DuckDBPyConnection, stage: str, scope: str) -> str | None:
    row = stored_stage(con, stage, scope)
    return row[0] if row else None


def stored_stage(con: duckdb.DuckDBPyConnection, stage: str, scope: str) -> tuple[str, str | None] | None:
    """``(fingerprint, output digest)`` stored for ``(stage, scope)``, or None."""
    rows = con.execute(
        "SELECT fingerprint, output_digest FROM stage_manifest WHERE stage = ? AND scope = ?", [stage, scope]
    ).fetchall()  # fetched to the end: no result left pending on the connection
    return rows[0] if rows else None


def record(
    con: duckdb.DuckDBPyConnection,
    stage: str,
    scope: str,
    fingerprint: str,
    detail: str,
    seconds: float,
    output: str = "",
) -> None:
    """Store the stage's fingerprint and output digest after it completed (replacing the previous record)."""
    with transaction(con):
        con.execute("DELETE FROM stage_manifest WHERE stage = ? AND scope = ?", [stage, scope])
        con.execute(
            "INSERT INTO stage_manifest (stage, scope, fingerprint, detail, seconds, finished_at, "
            "output_digest) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                stage,
                scope,
                fingerprint,
                detail,
                float(seconds),
                dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
                output,
            ],
        )
