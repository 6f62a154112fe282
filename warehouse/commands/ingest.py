"""``ragwh ingest ...``: load corpora into the warehouse."""
from __future__ import annotations

import typer

ingest_app = typer.Typer(help="Load a corpus into the warehouse.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(ingest_app, name="ingest")
