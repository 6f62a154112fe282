"""``ragwh embed``, ``ragwh retrieve``, ``ragwh rerank``, ``ragwh bm25``: thin wrappers over the stage functions
:func:`ingest.retrieval.embed.embed_stage`, :func:`ingest.retrieval.retrieve.retrieve_stage`,
:func:`ingest.retrieval.rerank.rerank_stage`, :func:`ingest.retrieval.bm25.bm25_stage`."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape

EMBEDDER_HELP = "Registered name, local model directory or hub id (default all-MiniLM-L6-v2, offline)."
WAREHOUSE_HELP = "Warehouse file (else $RAGWH_WAREHOUSE)."
PRECISION_HELP = (
    "auto (bf16 on a CPU with native bf16 for an encoder, fp16 on CUDA, else fp32) | fp32 | bf16; "
    "the stored name carries it (e.g. all-MiniLM-L6-v2@bf16)."
)


def _runs_table(title: str, reports: list[dict]):
    from rich.table import Table

    table = Table(title=escape(title))
    for col in ("corpus", "condition", "status", "queries", "rows"):
        table.add_column(col)
    for r in reports:
        table.add_row(
            escape(r["corpus"]),
            escape(r["condition"]),
            r["status"],
            str(r.get("n_queries", "")),
            "" if r["rows"] is None else str(r["rows"]),
        )
    return table


def _run(
    what: str,
    warehouse: str | None,
    stage,
    errors: tuple[type[Exception], ...],
    *,
    corpus: str | None = None,
    conditions: list[str] | None = None,
) -> dict:
    """Open the warehouse, return ``stage(con)``'s report; an expected failure (or an unknown ``corpus``
    or condition) exits 1 with its message."""
    from ragwh.experiment.names import UnknownName, check_conditions, check_corpus
    from warehouse.db import connect

    con = connect(warehouse, create=False)
    try:
        check_corpus(con, corpus)
        check_conditions(conditions)
        return stage(con)
    except UnknownName as exc:
        Console().print(f"[red]{what} failed:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    except errors as exc:
        Console().print(f"[red]{what} failed:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        con.close()


def embed_command(
    embedder: str | None = typer.Option(None, "--embedder", help=EMBEDDER_HELP),
    corpus: str | None = typer.Option(None, "--corpus", help="Only this corpus's condition texts and queries."),
    precision: str = typer.Option("auto", "--precision", help=PRECISION_HELP),
    warehouse: str | None = typer.Option(None, "--warehouse", help=WAREHOUSE_HELP),
) -> None:
    """Embed every condition text and query not yet stored for the embedder (resumable)."""
    from rich.table import Table

    from ingest.retrieval.embed import EmbedError, embed_stage
    from ingest.retrieval.embedders import EmbedderError
    from ingest.retrieval.truncation import truncation_summary

    console = Console()

    def stage(con):
        report = embed_stage(con, embedder, corpus=corpus, precision=precision)
        return {**report, "truncation": truncation_summary(con, report["embedder"], corpus, None)}

    r = _run("embed", warehouse, stage, (EmbedError, EmbedderError), corpus=corpus)
    console.print(
        f"embedder [bold]{escape(r['embedder'])}[/bold] (dim {r['dim']}): {r['requested']} texts requested, "
        f"{r['unique']} unique, {r['already_stored']} already stored, {r['embedded']} embedded"
    )
    table = Table(title="condition texts longer than the embedder's window (truncated: the model never reads the rest)")
    for col in ("corpus", "condition", "texts", "truncated", "tokens cut", "window", "not counted"):
        table.add_column(col, justify="right")
    for t in r["truncation"]:
        table.add_row(
            escape(t["corpus"]),
            escape(t["condition"]),
            str(t["texts"]),
            str(t["truncated"]),
            str(t["tokens_cut"]),
            str(t["max_tokens"]),
            str(t["uncounted"]),
        )
    console.print(table)


def retrieve_command(
    embedder: str | None = typer.Option(None, "--embedder", help=EMBEDDER_HELP),
    k: int = typer.Option(50, "--k", help="Chunks kept per query (>= 50 for the metrics)."),
    condition: list[str] | None = typer.Option(None, "--condition", help="Only these conditions (repeatable)."),
    corpus: str | None = typer.Option(None, "--corpus", help="Only this corpus."),
    precision: str = typer.Option("auto", "--precision", help="The vectors' precision: " + PRECISION_HELP),
    warehouse: str | None = typer.Option(None, "--warehouse", help=WAREHOUSE_HELP),
) -> None:
    """Exact top-k runs (flat or two-stage per seeds/conditions.csv); unchanged runs are skipped."""
    from ingest.retrieval.embed import EmbedError
    from ingest.retrieval.embedders import EmbedderError
    from ingest.retrieval.retrieve import RetrieveError, retrieve_stage

    console = Console()
    r = _run(
        "retrieve",
        warehouse,
        lambda con: retrieve_stage(
            con, embedder, k=k, conditions=condition or None, corpus=corpus, precision=precision
        ),
        (RetrieveError, EmbedError, EmbedderError),
        corpus=corpus,
        conditions=condition,
    )
    console.print(_runs_table(f"top-{r['k']} runs, embedder {r['embedder']}", r["conditions"]))
    for name in r["empty"]:
        console.print(f"[yellow]{escape(name)}: no chunks in int_condition_texts, nothing retrieved[/yellow]")


def rerank_command(
    reranker: str | None = typer.Option(
        None, "--reranker", help="Cross-encoder: local directory or hub id (default BAAI/bge-reranker-v2-m3)."
    ),
    embedder: str | None = typer.Option(None, "--embedder", help="First-stage runs of this embedder. " + EMBEDDER_HELP),
    condition: list[str] | None = typer.Option(None, "--condition", help="Only these conditions (repeatable)."),
    corpus: str | None = typer.Option(None, "--corpus", help="Only this corpus."),
    precision: str = typer.Option("auto", "--precision", help="The cross-encoder's precision: " + PRECISION_HELP),
    embedder_precision: str = typer.Option(
        "auto", "--embedder-precision", help="Precision of the first-stage runs' vectors (as for `ragwh embed`)."
    ),
    warehouse: str | None = typer.Option(None, "--warehouse", help=WAREHOUSE_HELP),
) -> None:
    """Re-score the top 50 of each first-stage run with a cross-encoder; stored as its own run."""
    from ingest.retrieval.embed import EmbedError
    from ingest.retrieval.embedders import EmbedderError
    from ingest.retrieval.rerank import RerankError, rerank_stage

    console = Console()
    r = _run(
        "rerank",
        warehouse,
        lambda con: rerank_stage(
            con,
            reranker,
            embedder,
            corpus=corpus,
            conditions=condition or None,
            precision=precision,
            embedder_precision=embedder_precision,
        ),
        (RerankError, EmbedError, EmbedderError),
        corpus=corpus,
        conditions=condition,
    )
    console.print(_runs_table(f"reranked top-{r['depth']} runs", r["conditions"]))
    console.print(
        f"scores produced by cross-encoder [bold]{escape(r['reranker'])}[/bold] over first-stage runs of "
        f"{escape(r['embedder'])} ({r['pairs_scored']} (query, text) pairs scored)"
    )


def bm25_command(
    k: int = typer.Option(50, "--k", help="Chunks kept per query."),
    condition: list[str] | None = typer.Option(None, "--condition", help="Only these conditions (repeatable)."),
    corpus: str | None = typer.Option(None, "--corpus", help="Only this corpus."),
    name: str = typer.Option("bm25", "--name", help="System name stored in runs.embedder."),
    k1: float = typer.Option(0.9, "--k1"),
    b: float = typer.Option(0.4, "--b"),
    method: str = typer.Option("lucene", "--method", help="lucene | robertson | atire (bm25s)"),
    stopwords: str = typer.Option("english", "--stopwords", help="english (Lucene's 33 words) | none"),
    stemmer: str = typer.Option("porter", "--stemmer", help="a PyStemmer algorithm (porter, english, ...) | none"),
    warehouse: str | None = typer.Option(None, "--warehouse", help=WAREHOUSE_HELP),
) -> None:
    """BM25 runs (bm25s) over every flat condition's texts, a system beside the dense embedders; unchanged runs are skipped."""
    from ingest.retrieval.bm25 import BM25Settings, bm25_stage
    from ingest.retrieval.embed import EmbedError
    from ingest.retrieval.retrieve import RetrieveError

    console = Console()
    try:
        settings = BM25Settings(name=name, k1=k1, b=b, method=method, stopwords=stopwords, stemmer=stemmer)
    except ValueError as exc:
        console.print(f"[red]bm25 failed:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(2) from None
    r = _run(
        "bm25",
        warehouse,
        lambda con: bm25_stage(con, settings, k=k, conditions=condition or None, corpus=corpus),
        (RetrieveError, EmbedError),
        corpus=corpus,
        conditions=condition,
    )
    console.print(_runs_table(f"BM25 top-{r['k']} runs ({r['system']})", r["conditions"]))
    for cond, reason in r["not_run"].items():
        console.print(f"[yellow]{escape(cond)}: not run for BM25: {escape(reason)}[/yellow]")


def register(app: typer.Typer) -> None:
    app.command("bm25")(bm25_command)
    app.command("embed")(embed_command)
    app.command("retrieve")(retrieve_command)
    app.command("rerank")(rerank_command)
