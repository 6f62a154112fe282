"""The rich summary ``ragwh ingest qasper`` prints from :func:`ingest.corpora.qasper.load.load_qasper`'s result."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ingest.corpora.summary_tables import counts_table, funnel_table


def render_summary(summary: dict, console: Console) -> None:
    """Print counts, the funnel per stage, match-method shares and quarantine counts."""
    console.print(
        counts_table(
            f"QASPER -> corpus {escape(repr(summary['corpus']))} ({summary['seconds']:.1f} s)",
            summary,
            ("papers", "sections", "paragraphs", "queries", "evidence_spans"),
        )
    )
    console.print(funnel_table(summary["funnel"]))

    shares = Table(title="evidence match method (share of spans)")
    for m in summary["match_shares"]:
        shares.add_column(m, justify="right")
    shares.add_row(*(f"{v:.1%}" for v in summary["match_shares"].values()))
    console.print(shares)

    quarantined = summary["quarantine"]
    if quarantined:
        console.print(
            "quarantined: "
            + ", ".join(f"{escape(stage)} {n}" for stage, n in quarantined.items())
            + " (see table quarantine)"
        )
    else:
        console.print("quarantined: none")
