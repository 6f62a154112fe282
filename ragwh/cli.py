"""The ``ragwh`` command line. Each area registers its commands from ``ragwh/commands/``."""

from __future__ import annotations

import copy
import importlib
import os
from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperGroup

WORKDIR_HELP = (
    "directory for every output: warehouse/ragwh.duckdb, reports/, exports/, dbt's target/ and logs/ "
    "(default $RAGWH_WORKDIR, else the current directory)"
)


def _set_workdir(ctx, param, value) -> None:
    from warehouse.paths import WORKDIR_ENV

    if value is not None:
        os.environ[WORKDIR_ENV] = str(Path(value).expanduser().resolve())


def _with_workdir(command, option) -> None:
    """``--workdir`` on ``command`` and, for a group, on each of its subcommands: ``ragwh run --workdir DIR``
    means what ``ragwh --workdir DIR run`` means. ``option`` is the root's own ``--workdir`` (so the help and
    the checks are the same), copied to set the variable eagerly instead of passing a value."""
    if not any(p.name == "workdir" for p in command.params):
        copied = copy.copy(option)
        copied.expose_value, copied.is_eager, copied.callback = False, True, _set_workdir
        command.params.append(copied)
    for sub in getattr(command, "commands", {}).values():
        _with_workdir(sub, option)


class _Commands(TyperGroup):
    """The root command group: a warehouse that cannot be opened (held by another process, not a
    DuckDB file, missing) ends any command with its one-line message and exit status 1; every command
    takes ``--workdir`` too."""

    def resolve_command(self, ctx, args):
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None:
            _with_workdir(command, next(p for p in self.params if p.name == "workdir"))
        return name, command, rest

    def invoke(self, ctx):
        from warehouse.db import WarehouseError

        try:
            return super().invoke(ctx)
        except WarehouseError as exc:
            from rich.console import Console
            from rich.markup import escape

            Console(stderr=True).print(f"[red]error:[/] {escape(str(exc))}", soft_wrap=True)
            raise typer.Exit(1) from None


app = typer.Typer(
    cls=_Commands,
    help="ragwarehouse: a DuckDB + dbt warehouse for controlled retrieval (RAG) experiments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)


def _version(value: bool) -> None:
    if value:
        from ragwh import __version__

        typer.echo(f"ragwh {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    workdir: Optional[Path] = typer.Option(None, "--workdir", file_okay=False, help=WORKDIR_HELP),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="print the version and exit"
    ),
) -> None:
    """ragwarehouse: a DuckDB + dbt warehouse for controlled retrieval (RAG) experiments."""
    from warehouse.paths import WORKDIR_ENV

    if workdir is not None:
        os.environ[WORKDIR_ENV] = str(workdir.expanduser().resolve())


# One module per area; each defines ``register(app: typer.Typer) -> None``.
COMMAND_MODULES = [
    "ragwh.commands.ingest",
    "ragwh.commands.fetch",
    "ragwh.commands.run",
    "ragwh.commands.report",
    "ragwh.commands.chunk",
    "ragwh.commands.retrieval",
    "ragwh.commands.induce",
    "ragwh.commands.generate",
    "ragwh.commands.imports",
    "ragwh.commands.warehouse",
    "ragwh.commands.debug",
    "ragwh.commands.labels",
    "ragwh.commands.slices",
]

for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


if __name__ == "__main__":  # pragma: no cover
    app()
