"""``ragwh induce``: induced section structure (TextTiling or an LLM) for the structured corpora."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

INDUCER_HELP = "texttiling (CPU, paragraph embeddings) or llm (needs RAGWH_LLM_* or --config)"


def induce_command(
    inducer: str = typer.Option("texttiling", "--inducer", help=INDUCER_HELP),
    corpus: Optional[str] = typer.Option(
        None, "--corpus", help="one corpus (default: every corpus with gold structure)"
    ),
    config: Optional[Path] = typer.Option(
        None, "--config", help="experiment YAML whose llm: mapping configures the LLM"
    ),
    replay_only: bool = typer.Option(False, "--replay-only", help="answer only from llm_calls; a miss is an error"),
    chunk: bool = typer.Option(True, "--chunk/--no-chunk", help="re-chunk afterwards and report span identity"),
    max_tokens: int = typer.Option(
        4096, "--max-tokens", min=1, help="cap on each structure answer (llm; model tokens)"
    ),
    warehouse: Optional[str] = typer.Option(None, "--warehouse", help="warehouse file (else $RAGWH_WAREHOUSE)"),
) -> None:
    """Induce, verify and load structure induced:<inducer>; print usable/repaired/failed and the comparison with gold."""
    from ingest.errors import IngestError
    from ingest.llm import LLMError
    from ingest.structure import INDUCERS, induce
    from warehouse.db import connect

    console = Console()
    if inducer not in INDUCERS:
        console.print(f"[red]unknown inducer {escape(repr(inducer))}[/]: use one of {', '.join(INDUCERS)}")
        raise typer.Exit(2)
    con = connect(warehouse, create=False)
    try:
        backend = _llm(con, config, replay_only) if inducer == "llm" else None
        structured = _structured(config) if inducer == "llm" else None
        report = induce(con, inducer, corpus, backend, chunk=chunk, max_tokens=max_tokens, structured=structured)
    except (IngestError, LLMError, ValueError) as exc:
        console.print(f"[red]induce failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1) from None
    finally:
        con.close()
    console.print(f"[bold]structure {escape(report['structure'])}[/]")
    for name, r in report["corpora"].items():
        counts = r.get("span_identity_counts") or {}
        if not chunk:
            span = "not computed (--no-chunk)"
        elif r.get("span_identity") is None:
            span = "n/a (no document has both chunksets)"
        else:
            span = (
                f"{r['span_identity']:.1%} ({counts['identical']}/{counts['induced_chunks']} induced chunks, "
                f"{counts['documents']} documents)"
            )
        llm_only = ""
        if "truncated" in r:
            llm_only = (
                f"; structured output for {r.get('structured', 0)}, first answer schema-valid for "
                f"{r.get('schema_valid', 0)}; "
                f"{r['truncated']} shown truncated (longer than the model's context), {r['cut_answers']} answers "
                f"cut at max_tokens, {r['correction_skipped']} corrections skipped"
            )
        console.print(
            f"{escape(name)}: {r['documents']} documents, {r['usable']} usable ({r['usable_first_try']} legal as returned, "
            f"{r['self_corrected']} self-corrected, {r['repaired']} repaired), {r['failed']} failed; "
            f"sections/doc {_pair(r['mean_sections_induced'], r['mean_sections_gold'])}; "
            f"top-level/doc {_pair(r['mean_top_level_induced'], r['mean_top_level_gold'])}; "
            f"induced chunk spans identical to a gold chunk span: {span}" + llm_only,
            soft_wrap=True,
        )
    if "llm" in report:
        llm = report["llm"]
        console.print(
            f"LLM {escape(str(llm['model']))} via {escape(str(llm['backend']))}: {llm['calls']} calls, "
            f"{llm['cache_hits']} cache hits"
        )
        tiny_label(console, llm["model"])
    console.print(f"{report['seconds']:.1f} s")


def tiny_label(console: Console, model: str) -> None:
    """Say that a tiny demo model made this output (its figures are never results)."""
    from ingest.llm.local_models import TINY_MODEL_LABEL, is_tiny_model

    if is_tiny_model(model):
        console.print(f"[bold yellow]{TINY_MODEL_LABEL}[/]", soft_wrap=True)


def _pair(induced: float | None, gold: float | None) -> str:
    fmt = lambda v: "-" if v is None else f"{v:.1f}"  # noqa: E731
    return f"{fmt(induced)} (gold {fmt(gold)})"


def _structured(config: Optional[Path]) -> bool | None:
    """The ``llm.structured`` setting (experiment config's llm: mapping, ``RAGWH_LLM_STRUCTURED``)."""
    from ingest.llm import load_llm_config

    return load_llm_config(config).structured


def _llm(con, config: Optional[Path], replay_only: bool):
    """The cached LLM the CLI stages use: experiment config's llm: mapping + RAGWH_LLM_* + --replay-only."""
    import dataclasses

    from ingest.llm import load_llm_config, open_llm

    cfg = load_llm_config(config)
    if replay_only:
        cfg = dataclasses.replace(cfg, replay_only=True)
    return open_llm(con, config=cfg)


def register(app: typer.Typer) -> None:
    app.command("induce")(induce_command)
