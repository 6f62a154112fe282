"""``ragwh import run``: a TREC run from another system, over a condition's chunk ids, as a run of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

import_app = typer.Typer(help="Import runs from other systems.", no_args_is_help=True)


@import_app.command("run")
def import_run_command(
    file: Path = typer.Argument(..., help="TREC run file: query Q0 chunk_id rank score tag (ranks or scores)"),
    name: str = typer.Option(
        ...,
        "--name",
        help="the run's system name (stored in runs.embedder, e.g. pyserini-bm25); "
        "not a name ragwh run stores its own runs under (bm25, a registered embedder)",
    ),
    condition: str = typer.Option(..., "--condition", help="condition whose chunk ids the run ranks (e.g. A3)"),
    corpus: Optional[str] = typer.Option(None, "--corpus", help="corpus (needed when the condition holds several)"),
    warehouse: Optional[Path] = typer.Option(None, "--warehouse", help="warehouse file (default $RAGWH_WAREHOUSE)"),
) -> None:
    """Validate a TREC run over `ragwh export corpus` ids and store it; `dbt build` / `ragwh run` then scores it."""
    from ingest.retrieval.embed import EmbedError
    from ingest.retrieval.imported import ImportRunError, import_run
    from warehouse.db import connect

    console = Console()
    con = connect(warehouse, create=False)
    try:
        result = import_run(con, file, name, condition, corpus)
    except (ImportRunError, EmbedError) as exc:
        Console(stderr=True).print(f"[red]import failed (nothing written):[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        con.close()
    console.print(
        escape(
            f"imported {result.name}: {result.n_lines} lines, {result.n_queries} queries of "
            f"{result.corpus}, condition {result.condition}, up to {result.k} chunks per query"
            + (
                f"; {result.n_queries_without_run} queries of the corpus have no ranking"
                if result.n_queries_without_run
                else ""
            )
        ),
        soft_wrap=True,
    )
    console.print(
        "score it: `dbt build --select path:models/staging +tag:evaluation` (or `ragwh run`), then "
        f"SELECT * FROM condition_means WHERE embedder = '{escape(result.name)}'",
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
