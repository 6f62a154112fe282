"""Run dbt from Python (``dbtRunner``) against the project and one warehouse file.

The project and profiles directories are both the dbt project (``warehouse.paths.PROJECT_ROOT``: the
checkout, or the copy an installed wheel ships); dbt's ``target/`` and ``logs/`` go under the working
directory (``warehouse.paths.workdir``), never into the project. ``RAGWH_WAREHOUSE`` is set to the
absolute warehouse path for the duration of the call (``profiles.yml`` reads it), so dbt and the
``ragwh`` CLI always work on the same file. The caller must not hold an open DuckDB connection to
that file while dbt runs (close it first): dbt opens its own, and it is closed again afterwards.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from warehouse.paths import PROJECT_ROOT, WAREHOUSE_ENV, workdir

#: Node statuses that mean "this node did not do what it should".
_BAD = {"error", "fail", "runtime error"}


class DbtError(RuntimeError):
    """A dbt invocation that failed; the message lists the failing nodes and what to do next."""


@dataclass(frozen=True)
class DbtResult:
    """Outcome of one successful invocation: node name -> status, plus warnings."""

    command: list[str]
    statuses: dict[str, str]

    @property
    def n_nodes(self) -> int:
        return len(self.statuses)

    @property
    def warnings(self) -> list[str]:
        return sorted(n for n, s in self.statuses.items() if s == "warn")


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


def _release_duckdb() -> None:
    """Close the DuckDB database dbt-duckdb keeps open in this process after an invocation, so the
    caller can reopen the file with any configuration (e.g. read-only). dbt-duckdb exposes no public
    call for this: its connection manager caches the environment in ``_ENV``."""
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    env = getattr(DuckDBConnectionManager, "_ENV", None)
    if env is not None:
        env.close()
    DuckDBConnectionManager.close_all_connections()


#: What rebuilds rows whose parent rows are gone (a corpus reloaded or rechunked outside ``ragwh run``).
REPAIR = (
    "`ragwh run --config <the experiment>` reloads what its config names and reruns every stage that "
    "depends on a changed table"
)
_ORPHANS_SHOWN = 3


def orphan_rows(warehouse: Path, nodes: list[Any]) -> str:
    """One line per failed relationships test: the child model and column, the parent, how many child
    values have no parent and the first :data:`_ORPHANS_SHOWN` of them (the test's own compiled query,
    run read-only on the warehouse after dbt let it go)."""
    import duckdb

    lines = []
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        for node in nodes:
            kwargs = node.test_metadata.kwargs
            child = (getattr(node, "attached_node", None) or getattr(node, "file_key_name", "") or "?").split(".")[-1]
            where = f"{child}.{kwargs.get('column_name')} -> {_ref_name(kwargs.get('to'))}.{kwargs.get('field')}"
            try:
                rows = con.execute(f"SELECT DISTINCT from_field FROM ({node.compiled_code}) ORDER BY 1").fetchall()
            except Exception as exc:  # the query could not be rerun here (e.g. a UDF): name the test only
                lines.append(f"  orphans {where}: not listed ({type(exc).__name__})")
                continue
            shown = ", ".join(repr(r[0]) for r in rows[:_ORPHANS_SHOWN]) + (
                ", ..." if len(rows) > _ORPHANS_SHOWN else ""
            )
            lines.append(f"  orphans {where}: {len(rows)} value(s) without a parent row: {shown}")
    finally:
        con.close()
    return "\n".join(lines)


def _ref_name(to: Any) -> str:
    """``ref('stg_documents')`` -> ``stg_documents``."""
    text = str(to)
    return text.split("'")[1] if text.count("'") >= 2 else text


def dbt_args(
    command: str, select: str | None, vars: dict[str, Any] | None, extra: list[str] | None = None
) -> list[str]:
    """The argument list passed to ``dbtRunner().invoke`` (also what a user would type after ``dbt``):
    dbt's target and log directories are ``target/`` and ``logs/`` under the working directory unless
    ``extra`` names its own."""
    extra = list(extra or [])
    args = [command]
    if select:
        args += ["--select", select]
    args += ["--project-dir", str(PROJECT_ROOT), "--profiles-dir", str(PROJECT_ROOT)]
    for flag, folder in (("--target-path", "target"), ("--log-path", "logs")):
        if flag not in extra:
            args += [flag, str(workdir() / folder)]
    if vars:
        args += ["--vars", json.dumps(vars, sort_keys=True)]
    return args + extra


def run_dbt(
    command: str,
    warehouse: str | os.PathLike,
    *,
    select: str | None = None,
    vars: dict[str, Any] | None = None,
    extra: list[str] | None = None,
    quiet: bool = True,
    progress: bool = True,
    repair: str | None = None,
) -> DbtResult:
    """Invoke ``dbt <command> [--select SELECT] --vars VARS`` on ``warehouse``.

    ``progress`` draws a bar over dbt's nodes (models, seeds, tests) as they finish.
    Raises :class:`DbtError` naming each failing node (model, test or seed) with dbt's message, or
    the exception dbt raised (bad project, unreachable file), and how to reproduce it by hand. A failed
    ``relationships`` test also names its orphan rows (:func:`orphan_rows`) and the command that
    rebuilds them (``repair``, default :data:`REPAIR`).
    """
    from dbt.cli.main import dbtRunner

    path = Path(warehouse).expanduser().resolve()
    args = dbt_args(command, select, vars, extra)
    if quiet:
        args.append("--quiet")
    columns = (TextColumn(f"dbt {command}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    # no anonymous usage tracking: runs must work (and not wait on the network) offline
    with (
        _env(WAREHOUSE_ENV, str(path)),
        _env("DBT_SEND_ANONYMOUS_USAGE_STATS", "False"),
        Progress(*columns, transient=True, disable=not progress) as bar,
    ):
        task = bar.add_task("nodes", total=None)

        def on_event(event) -> None:  # dbt's structured events: LogStartLine carries the node count
            name = event.info.name
            if name == "LogStartLine" and bar.tasks[task].total is None:
                bar.update(task, total=event.data.total)
            elif name == "NodeFinished":
                bar.advance(task)

        try:
            result = dbtRunner(callbacks=[on_event]).invoke(args)
        finally:
            _release_duckdb()
    statuses: dict[str, str] = {}
    failures: list[str] = []
    orphans: list[Any] = []  # failed relationships tests: their rows are named below
    for node_result in getattr(result.result, "results", None) or []:
        node = getattr(node_result, "node", None)
        name = getattr(node, "unique_id", None) or getattr(node, "name", "?")
        status = str(getattr(node_result.status, "value", node_result.status)).lower()
        statuses[name] = status
        if status in _BAD:
            failures.append(f"  {name}: {status}: {(node_result.message or '').strip()[:500]}")
            if status == "fail" and getattr(getattr(node, "test_metadata", None), "name", None) == "relationships":
                orphans.append(node)
    skipped = sum(1 for s in statuses.values() if s == "skipped")
    if not result.success or result.exception is not None:
        hint = f"reproduce with: RAGWH_WAREHOUSE={shlex.quote(str(path))} dbt " + " ".join(
            shlex.quote(a) for a in dbt_args(command, select, vars, extra)
        )
        if result.exception is not None:
            raise DbtError(f"dbt {command} failed: {type(result.exception).__name__}: {result.exception}\n{hint}")
        log = args[args.index("--log-path") + 1] if "--log-path" in args else "logs"
        detail = "\n".join(failures[:20]) if failures else f"  (no node reported a failure; see {log}/dbt.log)"
        if orphans:
            detail += "\n" + orphan_rows(path, orphans) + f"\n  repair: {repair or REPAIR}"
        more = f"\n  ... and {len(failures) - 20} more" if len(failures) > 20 else ""
        more += f"\n  ({skipped} downstream node(s) skipped)" if skipped else ""
        raise DbtError(f"dbt {command} --select {select} failed on {len(failures)} node(s):\n{detail}{more}\n{hint}")
    return DbtResult(command=args, statuses=statuses)


def setting_defaults() -> dict[str, Any]:
    """dbt_project.yml's ``setting_defaults``: every experiment setting the models read (macro setting)
    and its default."""
    import yaml

    return dict(
        yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text(encoding="utf-8"))["vars"]["setting_defaults"]
    )
