"""The ``ragwh`` command line. Each area registers its commands from ``warehouse/commands/``."""
from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    help="ragwarehouse: a DuckDB + dbt warehouse for controlled retrieval (RAG) experiments.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

# One module per area; each defines ``register(app: typer.Typer) -> None``.
COMMAND_MODULES = [
    "warehouse.commands.ingest",
    "warehouse.commands.fetch",
    "warehouse.commands.run",
    "warehouse.commands.report",
    "warehouse.commands.chunk",
    "warehouse.commands.retrieval",
    "warehouse.commands.induce",
    "warehouse.commands.generate",
]

for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


if __name__ == "__main__":  # pragma: no cover
    app()
