"""``ragwh contexts`` (A1 chunk contexts) and ``ragwh generate-queries`` (the generated Wikipedia benchmark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from ragwh.commands.induce import _llm, tiny_label

CONFIG_HELP = "experiment YAML whose llm: mapping configures the LLM (RAGWH_LLM_* override it)"


def contexts_command(
    corpus: Optional[str] = typer.Option(None, "--corpus", help="one corpus (default: every corpus with fixed chunks)"),
    config: Optional[Path] = typer.Option(None, "--config", help=CONFIG_HELP),
    replay_only: bool = typer.Option(False, "--replay-only", help="answer only from llm_calls; a miss is an error"),
    max_tokens: int = typer.Option(150, "--max-tokens", help="generation cap per context (model tokens)"),
    warehouse: Optional[str] = typer.Option(None, "--warehouse", help="warehouse file (else $RAGWH_WAREHOUSE)"),
) -> None:
    """Write an LLM context (contextual retrieval) as the llm_context prefix of every fixed chunk (condition A1)."""
    from ingest.chunking.contexts import generate_contexts

    _run(
        "contexts",
        lambda con: generate_contexts(con, corpus, _llm(con, config, replay_only), max_tokens=max_tokens),
        warehouse,
    )


def generate_queries_command(
    corpus: str = typer.Option("wikipedia", "--corpus", help="corpus with gold structure to write queries for"),
    config: Optional[Path] = typer.Option(None, "--config", help=CONFIG_HELP),
    replay_only: bool = typer.Option(False, "--replay-only", help="answer only from llm_calls; a miss is an error"),
    seed: Optional[int] = typer.Option(None, "--seed", help="sampling seed (default: the LLM config's seed)"),
    per_doc: int = typer.Option(3, "--per-doc", help="candidate spans per document and query type"),
    final_per_type: int = typer.Option(
        250, "--final-per-type", min=1, help="per-type cap: finals_t = min(cap, paraphrase survivors_t)"
    ),
    warehouse: Optional[str] = typer.Option(None, "--warehouse", help="warehouse file (else $RAGWH_WAREHOUSE)"),
) -> None:
    """Sample gold spans, have the LLM write and paraphrase queries, filter leakage, load balanced finals."""
    from ingest.genqueries import generate_queries

    _run(
        "generate-queries",
        lambda con: generate_queries(
            con, corpus, _llm(con, config, replay_only), seed=seed, per_doc=per_doc, final_per_type=final_per_type
        ),
        warehouse,
    )


def _run(name: str, work, warehouse: Optional[str]) -> None:
    from ingest.errors import IngestError
    from ingest.llm import LLMError
    from warehouse.db import connect

    console = Console()
    con = connect(warehouse, create=False)
    try:
        report = work(con)
    except (IngestError, LLMError, ValueError) as exc:
        console.print(f"[red]{name} failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        con.close()
    console.print_json(json.dumps(report, default=str))
    tiny_label(console, report.get("model", ""))


def register(app: typer.Typer) -> None:
    app.command("contexts")(contexts_command)
    app.command("generate-queries")(generate_queries_command)
