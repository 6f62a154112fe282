"""``ragwh label add FILE.csv --on queries|documents``: an analyst's labels, for slicing any contrast by them."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

label_app = typer.Typer(
    help="Labels of queries or documents that contrasts are sliced by (`ragwh slice`).", no_args_is_help=True
)


@label_app.command("add")
def add_command(
    file: Path = typer.Argument(..., help="CSV: the id column, then one column per label (values are text)"),
    on: str = typer.Option(..., "--on", help="what the ids name: queries | documents"),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE)"),
) -> None:
    """Load labels (ingest/corpora/labels.py): unknown ids are named with their line and nothing is written; adding a
    label again replaces it. The next evaluation build (`ragwh run`, or `dbt build`) slices every contrast by it."""
    from ingest.corpora.labels import LabelError, add_labels
    from warehouse.db import connect

    con = connect(warehouse, create=False)
    try:
        added = add_labels(con, file, on)
    except LabelError as exc:
        Console(stderr=True).print(f"[red]labels not added (nothing written):[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        con.close()
    console = Console()
    console.print(
        escape(
            f"{', '.join(added.labels)} on {added.entity}: {added.n_values} values over {added.n_ids} ids"
            + (f" (replaced: {', '.join(added.replaced)})" if added.replaced else "")
        ),
        soft_wrap=True,
    )
    console.print(
        escape(
            f"slice a contrast by it: `dbt build --select +contrast_slices +rewrite_slices` (or `ragwh run`), "
            f"then `ragwh slice --contrast C2 --by {added.labels[0]}`"
        ),
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.add_typer(label_app, name="label")
