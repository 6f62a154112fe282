"""``ragwh fetch qasper|hotpotqa``: download and verify an official release into the data directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Optional, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from ragwh.experiment.fetch import FetchError, fetch_qasper
from warehouse.paths import data_dir

T = TypeVar("T")

fetch_app = typer.Typer(help="Download public datasets into the data directory.", no_args_is_help=True)


def _target(console: Console, data: Optional[Path]) -> Path:
    """The data directory, or exit 2 saying how to name one."""
    target = data_dir(data)
    if target is None:
        console.print("[red]no data directory:[/] pass --data DIR or set RAGWH_DATA")
        raise typer.Exit(2)
    return target


def _fetch(console: Console, fetch: Callable[[], T]) -> T:
    """``fetch()``, a FetchError printed on one line and exit 1."""
    try:
        return fetch()
    except FetchError as exc:
        console.print(f"[red]fetch failed:[/] {escape(str(exc))}", soft_wrap=True)
        raise typer.Exit(1)


def _print_files(console: Console, files) -> None:
    for f in files:
        state = "downloaded" if f.downloaded else "already present"
        console.print(escape(f"{f.release}: {state}, {f.size:,} bytes, sha256 {f.sha256} ({f.verified_against})"))


@fetch_app.command("qasper")
def fetch_qasper_command(
    data: Optional[Path] = typer.Option(
        None, "--data", help="data directory (default $RAGWH_DATA); files go to DATA/qasper/"
    ),
    base_url: Optional[str] = typer.Option(None, "--url", help="base URL of the release (default AllenAI's S3 bucket)"),
) -> None:
    """Download qasper-train-dev-v0.3.tgz and qasper-test-and-evaluator-v0.3.tgz, verify, extract."""
    console = Console()
    target = _target(console, data)
    files = _fetch(console, lambda: fetch_qasper(target, base_url=base_url))
    _print_files(console, files)
    console.print(escape(f"extracted into {target / 'qasper'}; run with --data {target}"))


@fetch_app.command("hotpotqa")
def fetch_hotpotqa_command(
    data: Optional[Path] = typer.Option(
        None, "--data", help="data directory (default $RAGWH_DATA); the file goes to DATA/hotpotqa/"
    ),
    base_url: Optional[str] = typer.Option(None, "--url", help="base URL (default the HotpotQA authors' server)"),
) -> None:
    """Download hotpot_train_v1.1.json (the rewriting study reads its first 5,000 questions: --limit 5000)."""
    from ragwh.experiment.fetch import fetch_hotpotqa

    console = Console()
    target = _target(console, data)
    f = _fetch(console, lambda: fetch_hotpotqa(target, base_url=base_url))
    _print_files(console, [f])
    console.print(escape(f"load it with `ragwh ingest hotpotqa {f.path} --split train --limit 5000`"))


def register(app: typer.Typer) -> None:
    app.add_typer(fetch_app, name="fetch")
