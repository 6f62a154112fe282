"""The rich summary ``ragwh ingest wikipedia`` prints from :func:`ingest.corpora.wikipedia.load.load_wikipedia`'s result."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ingest.corpora.summary_tables import counts_table, funnel_table


def render_summary(summary: dict, console: Console) -> None:
    """Print counts, the funnel per stage, bucket sizes and per-article distributions."""
    console.print(
        counts_table(
            f"Wikipedia -> corpus {escape(repr(summary['corpus']))} ({summary['seconds']:.1f} s)",
            summary,
            ("documents", "sections", "paragraphs", "quarantined"),
        )
    )
    console.print(
        funnel_table(
            summary["funnel"], "funnel (input -> reasons -> kept; filter_failures counts each filter independently)"
        )
    )

    buckets = Table(title="topic buckets (loaded documents)")
    for bucket in summary["bucket_sizes"]:
        buckets.add_column(escape(bucket), justify="right")
    buckets.add_row(*(str(n) for n in summary["bucket_sizes"].values()))
    console.print(buckets)

    dist = Table(title="per article (loaded documents)")
    for col in ("", "min", "median", "mean", "max"):
        dist.add_column(col, justify="right")
    for key in ("sections_per_article", "paragraphs_per_article", "words_per_article"):
        s = summary[key]
        dist.add_row(
            key.replace("_per_article", ""), str(s["min"]), f"{s['median']:.1f}", f"{s['mean']:.1f}", str(s["max"])
        )
    console.print(dist)
    console.print("section-tree depth: " + ", ".join(f"{d} levels: {n}" for d, n in summary["depth_histogram"].items()))
    if summary["quarantined"]:
        console.print(f"quarantined: {summary['quarantined']} articles (see table quarantine, stage 'articles')")
    else:
        console.print("quarantined: none")
