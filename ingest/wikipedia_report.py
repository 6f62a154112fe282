"""The rich summary ``ragwh ingest wikipedia`` prints from :func:`ingest.wikipedia.load_wikipedia`'s result."""
from __future__ import annotations

from rich.console import Console
from rich.table import Table


def render_summary(summary: dict, console: Console) -> None:
    """Print counts, the funnel per stage, bucket sizes and per-article distributions."""
    head = Table(title=f"Wikipedia -> corpus {summary['corpus']!r} ({summary['seconds']:.1f} s)")
    for col in ("documents", "sections", "paragraphs", "quarantined"):
        head.add_column(col, justify="right")
    head.add_row(*(str(summary[k]) for k in ("documents", "sections", "paragraphs", "quarantined")))
    console.print(head)

    funnel = Table(title="funnel (input -> reasons -> kept; filter_failures counts each filter independently)")
    funnel.add_column("stage")
    funnel.add_column("reason")
    funnel.add_column("n", justify="right")
    for stage, reasons in summary["funnel"].items():
        for k, (reason, n) in enumerate(reasons.items()):
            funnel.add_row(stage if k == 0 else "", reason, str(n))
    console.print(funnel)

    buckets = Table(title="topic buckets (loaded documents)")
    for bucket in summary["bucket_sizes"]:
        buckets.add_column(bucket, justify="right")
    buckets.add_row(*(str(n) for n in summary["bucket_sizes"].values()))
    console.print(buckets)

    dist = Table(title="per article (loaded documents)")
    for col in ("", "min", "median", "mean", "max"):
        dist.add_column(col, justify="right")
    for key in ("sections_per_article", "paragraphs_per_article", "words_per_article"):
        s = summary[key]
        dist.add_row(key.replace("_per_article", ""), str(s["min"]), f"{s['median']:.1f}", f"{s['mean']:.1f}",
                     str(s["max"]))
    console.print(dist)
    console.print("section-tree depth: " + ", ".join(f"{d} levels: {n}" for d, n in summary["depth_histogram"].items()))
    if summary["quarantined"]:
        console.print(f"quarantined: {summary['quarantined']} articles (see table quarantine, stage 'articles')")
    else:
        console.print("quarantined: none")
