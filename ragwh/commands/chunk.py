"""``ragwh chunk``: build every chunkset and path/placebo prefix (a thin wrapper over
:func:`ingest.chunking.stage.chunk_corpus`)."""

from __future__ import annotations

from typing import Optional

import typer


def chunk_command(
    corpus: Optional[str] = typer.Option(None, "--corpus", help="Chunk only this corpus (default: every corpus)."),
    inducer: str = typer.Option(
        "texttiling",
        "--inducer",
        help="Fixed windows match 'induced:<inducer>' chunks when a document has them, else gold.",
    ),
    tokenizer: Optional[str] = typer.Option(
        None, "--tokenizer", help="Embedder whose tokenizer counts tokens (default all-MiniLM-L6-v2)."
    ),
    warehouse: Optional[str] = typer.Option(None, "--warehouse", help="Warehouse file (else $RAGWH_WAREHOUSE)."),
) -> None:
    """Chunk the loaded documents (structural per structure, fixed size-matched, doc) and write prefixes;
    replaces those documents' chunking rows in one transaction."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ingest.chunking.stage import chunk_corpus
    from ingest.errors import IngestError
    from warehouse.db import connect

    console = Console()
    con = connect(warehouse, create=False)
    try:
        if not con.execute("SELECT count(*) FROM documents").fetchone()[0]:
            raise IngestError("warehouse", None, "no documents to chunk", "load a corpus first with `ragwh ingest ...`")
        summary = chunk_corpus(con, corpus=corpus, inducer=inducer, tokenizer=tokenizer)
    except IngestError as exc:
        console.print(f"[red]chunk failed, warehouse unchanged:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        con.close()

    table = Table(title=f"chunksets ({summary['documents']} documents, tokenizer {escape(summary['tokenizer'])})")
    for col in ("corpus", "chunkset", "documents", "chunks", "mean tokens", ">350", "<60"):
        table.add_column(col, justify="left" if col in ("corpus", "chunkset") else "right")
    for r in summary["chunksets"]:
        table.add_row(
            escape(r["corpus"]),
            escape(r["chunkset"]),
            str(r["documents"]),
            str(r["chunks"]),
            f"{r['mean_content_tokens']:.1f}",
            str(r["over_350"]),
            str(r["under_60"]),
        )
    console.print(table)
    for r in summary["size_matching"]:
        console.print(
            f"{escape(r['corpus'])}: mean fixed {r['mean_fixed']:.1f} vs structural {r['mean_structural']:.1f} content "
            f"tokens ({r['fixed_chunks']} vs {r['structural_chunks']} chunks; reference "
            f"{escape(', '.join(r['reference_structures']))})"
        )
    residual = sum(r["same_document"] for r in summary["placebo"])
    pairs = sum(r["pairs"] for r in summary["placebo"])
    console.print(f"placebo: {pairs} (document, path) pairs, {residual} residual same-document assignments")
    if summary["llm_context_invalidated"]:
        console.print(
            f"[yellow]{summary['llm_context_invalidated']} llm_context prefixes deleted (their chunks changed)[/yellow]"
        )
    console.print(f"done in {summary['seconds']:.1f} s")


def register(app: typer.Typer) -> None:
    app.command("chunk")(chunk_command)
