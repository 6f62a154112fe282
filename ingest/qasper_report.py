"""The rich summary ``ragwh ingest qasper`` prints from :func:`ingest.qasper.load_qasper`'s result."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table


def render_summary(summary: dict, console: Console) -> None:
    """Print counts, the funnel per stage, match-method shares and quarantine counts."""
    head = Table(title=f"QASPER -> corpus {summary['corpus']!r} ({summary['seconds']:.1f} s)")
    for col in ("papers", "sections", "paragraphs", "queries", "evidence spans"):
        head.add_column(col, justify="right")
    head.add_row(*(str(summary[k]) for k in ("papers", "sections", "paragraphs", "queries", "evidence_spans")))
    console.print(head)

    funnel = Table(title="funnel (input -> reasons -> kept)")
    funnel.add_column("stage")
    funnel.add_column("reason")
    funnel.add_column("n", justify="right")
    for stage, reasons in summary["funnel"].items():
        for k, (reason, n) in enumerate(reasons.items()):
            funnel.add_row(stage if k == 0 else "", reason, str(n))
    console.print(funnel)

    shares = Table(title="evidence match method (share of spans)")
    for m in summary["match_shares"]:
        shares.add_column(m, justify="right")
    shares.add_row(*(f"{v:.1%}" for v in summary["match_shares"].values()))
    console.print(shares)

    quarantined = summary["quarantine"]
    if quarantined:
        console.print("quarantined: " + ", ".join(f"{stage} {n}" for stage, n in quarantined.items())
                      + " (see table quarantine)")
    else:
        console.print("quarantined: none")
