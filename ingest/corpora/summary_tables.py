"""Rich tables the loaders' summaries share: a row of counts and the funnel per stage."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table


def counts_table(title: str, summary: dict, keys: tuple[str, ...]) -> Table:
    """One row: ``summary[key]`` under a column per key (underscores shown as spaces). ``title`` is
    Rich markup (escape the names in it); the cells are printed as they are."""
    table = Table(title=title)
    for key in keys:
        table.add_column(key.replace("_", " "), justify="right")
    table.add_row(*(escape(str(summary[k])) for k in keys))
    return table


def funnel_table(funnel: dict[str, dict[str, int]], title: str = "funnel (input -> reasons -> kept)") -> Table:
    """Stage, reason and count, the stage named on its first row only."""
    table = Table(title=title)
    table.add_column("stage")
    table.add_column("reason")
    table.add_column("n", justify="right")
    for stage, reasons in funnel.items():
        for k, (reason, n) in enumerate(reasons.items()):
            table.add_row(escape(stage) if k == 0 else "", escape(reason), str(n))
    return table
