"""``ragwh ingest ...``: load corpora into the warehouse."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

ingest_app = typer.Typer(help="Load a corpus into the warehouse.", no_args_is_help=True)

WAREHOUSE_OPTION = typer.Option(None, "--warehouse", help="Warehouse file (else $RAGWH_WAREHOUSE).")


def register(app: typer.Typer) -> None:
    app.add_typer(ingest_app, name="ingest")


def _load(what: str, warehouse: str | None, load: Callable, unit: str | None = None) -> dict:
    """Open the warehouse, run ``load(con, progress)`` (with a progress bar over ``unit`` when given)
    and return its summary; a bad input exits 1 with the loader's message (file and record named)
    after the transaction rolled back (and a warehouse file this call created is removed again).
    When dbt marts exist they were built from the corpus as it was: the output says to rebuild them."""
    from ingest.errors import IngestError
    from warehouse.db import connect, discard_if_empty
    from warehouse.paths import warehouse_path

    console = Console()
    existed = warehouse_path(warehouse).exists()
    con = connect(warehouse)
    try:
        with Progress(console=console, transient=True, disable=unit is None) as bar:
            task = bar.add_task(unit or what, total=None)
            summary = load(con, lambda done, total: bar.update(task, completed=done, total=total))
        marts = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'query_metrics'")
        stale = bool(marts.fetchone()[0])
    except (IngestError, OSError, ValueError) as exc:
        con.close()
        if not existed:
            discard_if_empty(warehouse)
        console.print(f"[red]ingest {what} failed, warehouse unchanged:[/red] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        con.close()
    if stale:
        console.print(
            "[yellow]marts were built before this load: rebuild them with `dbt build` (or `ragwh run`)[/]",
            soft_wrap=True,
        )
    return summary


@ingest_app.command("qasper")
def ingest_qasper(
    files: list[str] = typer.Argument(..., help="QASPER v0.3 JSON and/or allenai/qasper JSONL files (merged)."),
    corpus: str = typer.Option("qasper", "--corpus", help="Corpus name (doc_id prefix)."),
    limit: int | None = typer.Option(None, "--limit", help="Keep the first N papers in sorted paper-id order."),
    warehouse: str | None = WAREHOUSE_OPTION,
) -> None:
    """Load QASPER papers, gold sections, questions and evidence (replaces the corpus's rows)."""
    from ingest.corpora.qasper.load import load_qasper
    from ingest.corpora.qasper.report import render_summary

    summary = _load(
        "qasper",
        warehouse,
        lambda con, progress: load_qasper(con, [Path(f) for f in files], corpus=corpus, limit=limit, progress=progress),
        unit="papers",
    )
    render_summary(summary, Console())


@ingest_app.command("wikipedia")
def ingest_wikipedia(
    file: str = typer.Argument(..., help="MediaWiki XML export (.xml) or JSONL with a 'wikitext' field (.jsonl)."),
    no_filters: bool = typer.Option(False, "--no-filters", help="Load every article (skip the quality filters)."),
    seed: int = typer.Option(20260710, "--seed", help="Seed of the sampling walk."),
    cap: int = typer.Option(60, "--cap", help="Most articles kept per topic bucket."),
    corpus: str = typer.Option("wikipedia", "--corpus", help="Corpus name (doc_id prefix)."),
    warehouse: str | None = WAREHOUSE_OPTION,
) -> None:
    """Load Wikipedia articles and their gold sections (replaces the corpus's rows)."""
    from ingest.corpora.wikipedia.load import load_wikipedia
    from ingest.corpora.wikipedia.report import render_summary

    summary = _load(
        "wikipedia",
        warehouse,
        lambda con, progress: load_wikipedia(
            con, Path(file), corpus=corpus, filters=not no_filters, seed=seed, cap=cap, progress=progress
        ),
        unit="articles",
    )
    render_summary(summary, Console())


def _print_flat_summary(summary: dict) -> None:
    """Counts and funnel of a corpus without structure (BEIR, HotpotQA, EnterpriseRAG-Bench, AmbigNQ)."""
    console = Console()
    console.print(
        f"[green]{escape(summary['corpus'])}[/green]: {summary['documents']} documents, "
        f"{summary['queries']} queries, {summary['qrels']} qrels, {summary['quarantined']} quarantined "
        f"({summary['seconds']:.1f} s)"
    )
    for stage, reasons in summary["funnel"].items():
        console.print(f"  {escape(stage)}: " + ", ".join(f"{escape(r)} {n}" for r, n in reasons.items()))
    console.print("  next: `ragwh chunk` (or `ragwh run`) gives each document its one 'doc' chunk (condition DOC)")


@ingest_app.command("beir")
def ingest_beir(
    directory: str = typer.Argument(..., help="BEIR directory: corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv."),
    split: str = typer.Option("test", "--split", help="qrels split to load (qrels/SPLIT.tsv); only its queries."),
    corpus: str | None = typer.Option(None, "--corpus", help="Corpus name (default: directory name without 'beir_')."),
    warehouse: str | None = WAREHOUSE_OPTION,
) -> None:
    """Load a BEIR corpus: one-paragraph documents, the split's queries and qrels (replaces the corpus's rows)."""
    from ingest.corpora.beir import load_beir

    _print_flat_summary(_load("beir", warehouse, lambda con, _: load_beir(con, directory, corpus=corpus, split=split)))


@ingest_app.command("hotpotqa")
def ingest_hotpotqa(
    file: str = typer.Argument(..., help="HotpotQA distractor JSON (original format)."),
    corpus: str = typer.Option("hotpotqa", "--corpus", help="Corpus name (doc_id prefix)."),
    limit: int | None = typer.Option(None, "--limit", help="Keep the first N questions in file order."),
    split: str = typer.Option(
        "dev", "--split", help="Split recorded for the documents (train for hotpot_train_v1.1.json)."
    ),
    warehouse: str | None = WAREHOUSE_OPTION,
) -> None:
    """Load HotpotQA: each context paragraph a document, supporting-fact titles the relevant documents."""
    from ingest.corpora.hotpotqa import load_hotpotqa

    _print_flat_summary(
        _load("hotpotqa", warehouse, lambda con, _: load_hotpotqa(con, file, corpus=corpus, limit=limit, split=split))
    )


@ingest_app.command("enterprise-rag")
def ingest_enterprise_rag(
    questions: str = typer.Argument(..., help="EnterpriseRAG-Bench questions.jsonl (the official release)."),
    documents: str | None = typer.Option(
        None,
        "--documents",
        help="The export: a folder of dsid_*__*.txt files, "
        "the per-source JSON, or a BEIR corpus.jsonl (the shared data has none).",
    ),
    corpus: str = typer.Option("enterprise_rag", "--corpus", help="Corpus name (doc_id prefix)."),
    warehouse: str | None = WAREHOUSE_OPTION,
) -> None:
    """Load EnterpriseRAG-Bench: export documents, answerable questions, expected-document qrels, gold answers."""
    from ingest.corpora.enterprise_rag import load_enterprise_rag

    _print_flat_summary(
        _load("enterprise-rag", warehouse, lambda con, _: load_enterprise_rag(con, questions, documents, corpus=corpus))
    )


@ingest_app.command("ambignq")
def ingest_ambignq(
    questions: str = typer.Argument(..., help="AmbigNQ (light) questions JSON."),
    passages: str | None = typer.Option(
        None,
        "--passages",
        help="Passages in BEIR corpus layout (corpus.jsonl or its folder); none ship with the shared data.",
    ),
    corpus: str = typer.Option("ambignq", "--corpus", help="Corpus name (doc_id prefix)."),
    warehouse: str | None = WAREHOUSE_OPTION,
) -> None:
    """Load AmbigNQ: passages, questions with a passage containing a gold answer (SQuAD-normalized), answers."""
    from ingest.corpora.ambignq import load_ambignq

    _print_flat_summary(
        _load("ambignq", warehouse, lambda con, _: load_ambignq(con, questions, passages, corpus=corpus))
    )
