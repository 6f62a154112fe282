"""HTML and figure helpers of the report: number formatting, tables, embedded figures, sections, CSS.

Figures: :func:`svg` embeds a figure as SVG and, inside :func:`figures_to`, also writes it as
``<name>.svg`` and ``<name>.pdf`` (vector files for a paper; deterministic: fixed SVG ids, no dates).
The chunking study's figures are drawn :data:`PAPER_WIDTH` inches wide (one column of a two-column
paper); the rewriting sections embed PNG (:func:`png`) and write the same files when named.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import html
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

#: one column of a two-column paper (ACL / ACM / IEEE: 3.3-3.5 in), inches
PAPER_WIDTH = 3.4
_SAVE = {"svg": {"metadata": {"Date": None}}, "pdf": {"metadata": {"CreationDate": None, "ModDate": None}}}


@dataclass
class FigureSink:
    """Where :func:`svg` / :func:`png` write each named figure as SVG and PDF."""

    directory: Path
    written: list[Path] = field(default_factory=list)

    def save(self, fig, name: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        for ext, options in _SAVE.items():
            path = self.directory / f"{name}.{ext}"
            fig.savefig(path, format=ext, bbox_inches="tight", **options)
            self.written.append(path)


_SINK: contextvars.ContextVar[FigureSink | None] = contextvars.ContextVar("ragwh_figures", default=None)


@contextlib.contextmanager
def figures_to(directory: str | Path | None) -> Iterator[FigureSink | None]:
    """Within the block, every named figure is also written to ``directory`` (None: nowhere)."""
    if directory is None:
        yield None
        return
    sink = FigureSink(Path(directory))
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


def figure_name(text: str) -> str:
    """A file stem from a figure's title (lowercase letters, digits, dashes)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def svg(fig, name: str) -> str:
    """The figure embedded as SVG (and written as ``name``.svg / .pdf inside :func:`figures_to`)."""
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "ragwarehouse"  # stable element ids: identical files on a rerun
    sink = _SINK.get()
    if sink is not None:
        sink.save(fig, name)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", **_SAVE["svg"])
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(name)}" src="data:image/svg+xml;base64,{data}">'


#: A table cell holding a number, an interval or a dash: right-aligned.
NUMERIC = re.compile(r"(&lt;)?[\s\d.,+\-−\[\]–e/%]+(\s*<small>\(\d+\)</small>)?")


def fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(str(value))


def p_text(value, n_boot: int | None = None, scale: int = 1) -> str:
    """A p-value as plain text: '–' when absent; a bootstrap p of exactly 0 (no replicate of ``n_boot``
    on the far side of zero, udfs/stats/bootstrap.py) as '< 1/B' ('< m/B' for a Holm p adjusted over a family
    of ``scale`` = m contrasts); otherwise '<0.001' or three decimals. The report and the CLI summary
    both use it."""
    if value is None:
        return "–"
    if value == 0 and n_boot:
        return f"< {scale}/{n_boot:,}"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def fmt_p(value, n_boot: int | None = None, scale: int = 1) -> str:
    """:func:`p_text` for HTML."""
    return html.escape(p_text(value, n_boot, scale))


def html_table(headers: list[str], rows: list[list[str]], cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr"
        + (' class="primary"' if r and r[0].startswith("★") else "")
        + ">"
        + "".join(f'<td class="num">{c}</td>' if NUMERIC.fullmatch(c) else f"<td>{c}</td>" for c in r)
        + "</tr>"
        for r in rows
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def png(fig, name: str | None = None) -> str:
    """The figure embedded as PNG (the rewriting sections); written as ``name``.svg / .pdf inside
    :func:`figures_to` when named."""
    import matplotlib.pyplot as plt

    sink = _SINK.get()
    if sink is not None and name:
        sink.save(fig, name)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def not_run_note(reason: str) -> str:
    return f'<p class="notrun">not run: {html.escape(reason)}</p>'


def section(anchor: str, title: str, what: str, body: str) -> str:
    return (
        f'<section id="{anchor}"><h2>{html.escape(title)}</h2><p class="what">{html.escape(what)}</p>{body}</section>'
    )


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:1.8em}
h3{font-size:1em;margin:1.2em 0 .4em} table{border-collapse:collapse;margin:.5em 0;font-size:.86em}
details{margin:.4em 0} details>summary{cursor:pointer;font-weight:600}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left} th{background:#f3f3f3} td.num{text-align:right}
tr.primary td{background:#fdf2e9;font-weight:600} .what{color:#444;font-style:italic}
.notrun{color:#a04000} .banner{background:#fff3cd;border:2px solid #e0a800;padding:.8em 1em;font-weight:700;margin:1em 0}
.meta{color:#555;font-size:.9em} img{max-width:100%;display:block;margin:.5em 0} nav a{margin-right:1em}
"""


def experiment_meta(con, study: str) -> str:
    """The report's line about the warehouse's experiment (its last run of ``study``, as recorded in
    ``experiments``), or a warning that none was recorded."""
    import json

    from warehouse.identity import latest_experiment

    row = latest_experiment(con, study)
    if row is None:
        return (
            "<p class='meta'><b>No experiment recorded</b> in this warehouse (it was not built by `ragwh run`): "
            "the settings named here are the config's, not necessarily those the marts were built with.</p>"
        )
    packages = ", ".join(f"{k} {v}" for k, v in sorted(json.loads(row["packages_json"]).items()) if v)
    overrides = json.loads(row["overrides_json"])
    finished = f"{row['finished_at']:%Y-%m-%d %H:%M:%S} UTC" if row["finished_at"] else "–"
    fields = [
        ("experiment", f"#{row['experiment_id']} {row['name']} ({row['study']})"),
        ("status", row["status"] + (" (this report is written by the run)" if row["status"] == "running" else "")),
        ("started", f"{row['started_at']:%Y-%m-%d %H:%M:%S} UTC"),
        ("finished", finished),
        (
            "config",
            f"{row['config_file']} (sha256 {row['config_hash'][:12]})"
            + (f", overrides {json.dumps(overrides, sort_keys=True)}" if overrides else ""),
        ),
        ("code", f"ragwarehouse {row['project_version']}, commit {row['git_commit'] or 'unknown'}"),
        ("precision", row["precision"]),
        ("device", row["device"]),
        ("packages", packages),
    ]
    return (
        "<p class='meta experiment'>"
        + " · ".join(f"{html.escape(k)} <b>{html.escape(str(v))}</b>" for k, v in fields)
        + "</p>"
    )
