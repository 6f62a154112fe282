"""The experiment report: ONE self-contained HTML file (figures embedded as base64 PNG).

Everything is read from the warehouse: the evaluation marts (``contrasts``, ``primary_contrasts``,
``condition_means``, ``metric_cuts``, ``dose_response``, ``section_recall_summary``) and the loaded
tables (``funnel``, ``chunks``). Per-condition means are unweighted means over queries; their error
bars in the dose-response figure are ``mean ± 1.96·sd/√n`` over queries (a plain normal interval,
not document-clustered: the clustered intervals are the contrasts' and the slopes'). A section whose
inputs are absent says 'not run' and why, never shows an empty figure.
"""
from __future__ import annotations

import base64
import csv
import html
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from warehouse.config import ExperimentConfig
from warehouse.paths import PROJECT_ROOT

#: (family, treatment conditions by prefix depth 0..3) for the dose-response figure.
DOSE_FAMILIES = (("induced (A)", ("A2", "A3-d1", "A3-d2", "A3")), ("gold (G)", ("G2", "G3-d1", "G3-d2", "G3")))
_BUDGET = re.compile(r"(?i)(tbc|budget|token)[^@]*@(\d+)")
#: A table cell holding a number, an interval or a dash: right-aligned.
_NUMERIC = re.compile(r"(&lt;)?[\s\d.,+\-−\[\]–e]+(\s*<small>\(\d+\)</small>)?")


# --- data access -----------------------------------------------------------------------------------
def relation_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name]).fetchone()[0])


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list | dict | None = None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _mart(con: duckdb.DuckDBPyConnection, name: str, order: str = "") -> list[dict]:
    """All rows of mart ``name`` ([] when it was not built)."""
    return _rows(con, f"SELECT * FROM {name} {order}") if relation_exists(con, name) else []


def seed_rows(name: str) -> list[dict]:
    with open(PROJECT_ROOT / "seeds" / f"{name}.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def condition_order() -> list[str]:
    return [r["condition"] for r in seed_rows("conditions")]


def contrast_rows(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Every row of the ``contrasts`` mart with the seed's question, primary cell first."""
    if not relation_exists(con, "contrasts"):
        return []
    questions = {r["contrast"]: r for r in seed_rows("contrasts")}
    rows = _rows(con, "SELECT * FROM contrasts ORDER BY is_primary DESC, corpus, embedder, reranker, metric, contrast")
    for r in rows:
        seed = questions.get(r["contrast"], {})
        r["question"] = seed.get("question", "")
        r["arms"] = f"{seed.get('treatment', '?')} − {seed.get('control', '?')}"
    return rows


def metric_names(con: duckdb.DuckDBPyConnection, primary: str) -> list[str]:
    """Metrics in ``condition_means``, the primary metric first, then alphabetical."""
    if not relation_exists(con, "condition_means"):
        return []
    names = [r[0] for r in con.execute("SELECT DISTINCT metric FROM condition_means ORDER BY 1").fetchall()]
    natural = lambda m: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", m)]  # TBC@512 < TBC@1024
    return sorted(names, key=lambda m: (m != primary, natural(m)))


def condition_means(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Rows of the ``condition_means`` mart with ``mean``, ``n`` and the normal-interval half-width
    ``half_ci = 1.96 · sd / √n`` over queries."""
    return _rows(con, """
        SELECT corpus, embedder, reranker, condition, metric, mean_value AS mean, n_queries AS n,
               1.96 * coalesce(sd_value, 0) / sqrt(greatest(n_queries, 1)) AS half_ci
        FROM condition_means ORDER BY corpus, embedder, reranker, condition, metric""") \
        if relation_exists(con, "condition_means") else []


@dataclass(frozen=True)
class Cell:
    corpus: str
    embedder: str
    reranker: str


def primary_cells(config: ExperimentConfig, embedder_name: str) -> list[Cell]:
    """The primary cell per corpus (the config's embedder x reranker; all corpora unless it names one)."""
    corpora = [config.primary.corpus] if config.primary.corpus else [c.name for c in config.corpora]
    return [Cell(c, embedder_name, config.primary.reranker) for c in corpora]


# --- HTML and figure helpers -------------------------------------------------------------------------
def _fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return html.escape(str(value))


def _p(value) -> str:
    if value is None:
        return "–"
    return "&lt;0.001" if value < 0.001 else f"{value:.3f}"


def _table(headers: list[str], rows: list[list[str]], cls: str = "") -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr" + (' class="primary"' if r and r[0].startswith("★") else "") + ">"
                   + "".join(f'<td class="num">{c}</td>' if _NUMERIC.fullmatch(c) else f"<td>{c}</td>" for c in r)
                   + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def _not_run(reason: str) -> str:
    return f'<p class="notrun">not run: {html.escape(reason)}</p>'


def _section(anchor: str, title: str, what: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{html.escape(title)}</h2><p class="what">{html.escape(what)}</p>{body}</section>'


# --- sections -----------------------------------------------------------------------------------------
def _contrast_table(rows: list[dict]) -> str:
    headers = ["contrast", "arms", "question", "n queries", "n docs", "mean Δ", "95% CI", "p", "Holm p", "dz"]
    out = []
    for r in rows:
        label = ("★ " if r.get("is_primary") else "") + html.escape(r["contrast"])
        out.append([label, html.escape(r["arms"]), html.escape(r["question"]), _fmt(r.get("n_queries")),
                    _fmt(r.get("n_docs")), _fmt(r.get("mean_delta"), 4),
                    f"[{_fmt(r.get('ci_low'), 4)}, {_fmt(r.get('ci_high'), 4)}]",
                    _p(r.get("p_value")), _p(r.get("p_holm")), _fmt(r.get("dz"))])
    return _table(headers, out, "contrasts")


def section_contrasts(rows: list[dict], config: ExperimentConfig, not_run: dict[str, str], mixed: list[dict]) -> str:
    what = ("Pre-registered contrasts: paired per-query differences (treatment − control) of the primary metric, "
            "their mean, a document-clustered bootstrap 95% CI and two-sided p "
            f"(B = {config.bootstrap_b:,}, seed {config.bootstrap_seed}), Holm-adjusted p across the contrast family "
            "of the cell, and Cohen's dz. ★ marks the primary cell fixed before the runs; every other cell is exploratory.")
    missing = {k: v for k, v in not_run.items() if re.fullmatch(r"C\d+", k)}
    notes = "".join(f"<li>{html.escape(k)}: not run — {html.escape(v)}</li>" for k, v in sorted(missing.items()))
    notes = f"<ul class='notrun'>{notes}</ul>" if notes else ""
    if not rows:
        return _section("contrasts", "Primary cell: contrasts", what,
                        _not_run("the contrasts mart is empty or absent (dbt evaluation models not built)") + notes)
    primary = [r for r in rows if r.get("is_primary")]
    body = _table_or_note(primary, "no row of the contrasts mart is marked is_primary")
    if primary and mixed:
        table = [[html.escape(r["contrast"]), _fmt(r.get("mde"), 4), _fmt(r.get("mixed_coef"), 4),
                  f"[{_fmt(r.get('mixed_ci_low'), 4)}, {_fmt(r.get('mixed_ci_high'), 4)}]", _p(r.get("mixed_p_value")),
                  "yes" if r.get("mixed_converged") else "no"] for r in mixed]
        body += ("<p class='what'>Secondary checks for the primary cell: the minimum detectable effect (80% power, "
                 "α = 0.05, from the bootstrap spread) and a MixedLM (score ~ condition, random intercept per document).</p>"
                 + _table(["contrast", "MDE", "MixedLM coef", "MixedLM 95% CI", "MixedLM p", "converged"], table))
    exploratory = [r for r in rows if not r.get("is_primary")]
    cells: dict[tuple, list[dict]] = {}
    for r in exploratory:
        cells.setdefault((r["corpus"], r["embedder"], r["reranker"], r["metric"]), []).append(r)
    more = "".join(f"<h3>{html.escape(' · '.join(map(str, key)))}</h3>" + _contrast_table(group)
                   for key, group in cells.items())
    body += notes
    if more:
        body += "<h3 class='sub'>Exploratory cells</h3>" + f"<details><summary>{len(cells)} cells</summary>{more}</details>"
    return _section("contrasts", "Primary cell: contrasts", what, body)


def _table_or_note(primary: list[dict], note: str) -> str:
    if not primary:
        return _not_run(note)
    r0 = primary[0]
    cell = f"{r0['corpus']} · {r0['embedder']} · reranker {r0['reranker']} · {r0['metric']}"
    return f"<h3>★ {html.escape(cell)}</h3>" + _contrast_table(primary)


def section_forest(rows: list[dict]) -> str:
    what = ("Every contrast in every cell as a point (mean Δ) with its 95% bootstrap CI; the dashed line is no "
            "difference, filled markers are the primary cell, hollow ones exploratory.")
    if not rows:
        return _section("forest", "Forest plot of all contrasts", what, _not_run("no contrasts were computed"))
    import matplotlib.pyplot as plt

    labels = [f"{r['contrast']} {r['metric']} · {r['embedder']}" + ("" if r["reranker"] == "none" else f" · {r['reranker']}")
              + (f" · {r['corpus']}" if len({x['corpus'] for x in rows}) > 1 else "") for r in rows]
    height = max(2.5, 0.28 * len(rows) + 1)
    fig, ax = plt.subplots(figsize=(8, height))
    for i, r in enumerate(rows):
        y = len(rows) - i
        lo, hi, m = r.get("ci_low"), r.get("ci_high"), r.get("mean_delta")
        color = "#b03a2e" if r.get("is_primary") else "#34495e"
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [y, y], color=color, lw=1.6)
        ax.plot([m], [y], "o", color=color, mfc=color if r.get("is_primary") else "white", ms=6)
    ax.axvline(0, ls="--", color="grey", lw=1)
    ax.set_yticks(range(len(rows), 0, -1), labels, fontsize=8)
    ax.set_xlabel("mean Δ (treatment − control) with 95% CI")
    ax.grid(axis="x", alpha=0.3)
    return _section("forest", "Forest plot of all contrasts", what, _png(fig))


def section_means(means: list[dict], cells: list[Cell], metrics: list[str], not_run: dict[str, str]) -> str:
    what = ("Mean of each metric per condition over the queries scored (rows: conditions in the order of the "
            "conditions seed; columns: metrics; the study's Table 2 layout), for the primary embedder and reranker.")
    if not means:
        return _section("means", "Per-condition means", what, _not_run("the condition_means mart is empty or absent"))
    order = {c: i for i, c in enumerate(condition_order())}
    body = ""
    for cell in cells:
        sub = [m for m in means if (m["corpus"], m["embedder"], m["reranker"]) == (cell.corpus, cell.embedder, cell.reranker)]
        if not sub:
            body += _not_run(f"no scored queries for {cell.corpus} · {cell.embedder} · {cell.reranker}")
            continue
        conds = sorted({m["condition"] for m in sub}, key=lambda c: order.get(c, 99))
        value = {(m["condition"], m["metric"]): m for m in sub}
        rows = [[html.escape(c)] + [_fmt(value[(c, mt)]["mean"]) if (c, mt) in value else "–" for mt in metrics]
                + [_fmt(max(value[(c, mt)]["n"] for mt in metrics if (c, mt) in value))] for c in conds]
        body += f"<h3>{html.escape(f'{cell.corpus} · {cell.embedder} · reranker {cell.reranker}')}</h3>"
        body += _table(["condition", *metrics, "n queries"], rows, "means")
    absent = [f"{c} ({html.escape(r)})" for c, r in sorted(not_run.items(), key=lambda kv: order.get(kv[0], 99))
              if c in order]
    if absent:
        body += "<p class='notrun'>Conditions not run: " + "; ".join(absent) + "</p>"
    return _section("means", "Per-condition means", what, body)


def section_dose(means: list[dict], cells: list[Cell], metric: str, slopes: list[dict]) -> str:
    what = (f"Mean {metric} against heading-path depth (0 = no prefix, 1 = [Title], 2 = [Title › Section], 3 = full "
            "path) for induced and gold structure; bars are normal 95% intervals over queries. The table gives the "
            "mean per-query slope (metric points per depth level) with its document-clustered bootstrap CI and p.")
    import matplotlib.pyplot as plt

    figs = ""
    for cell in cells:
        sub = {m["condition"]: m for m in means if m["metric"] == metric
               and (m["corpus"], m["embedder"], m["reranker"]) == (cell.corpus, cell.embedder, cell.reranker)}
        fams = [(name, [(d, sub[c]) for d, c in enumerate(conds) if c in sub]) for name, conds in DOSE_FAMILIES]
        fams = [(n, pts) for n, pts in fams if len(pts) >= 2]
        if not fams:
            continue
        fig, ax = plt.subplots(figsize=(6, 3.6))
        for (name, pts), color in zip(fams, ("#1f77b4", "#d35400")):
            ax.errorbar([d for d, _ in pts], [p["mean"] for _, p in pts], yerr=[p["half_ci"] for _, p in pts],
                        marker="o", capsize=3, label=name, color=color)
        ax.set_xticks([0, 1, 2, 3])
        ax.set_xlabel("prefix depth")
        ax.set_ylabel(metric)
        ax.set_title(f"{cell.corpus} · {cell.embedder}", fontsize=9)
        ax.legend()
        ax.grid(alpha=0.3)
        figs += _png(fig)
    body = figs or _not_run(f"fewer than two depths of a family have {metric} scores")
    if slopes:
        table = [[_fmt(r["family"]), _fmt(r["corpus"]), _fmt(r["embedder"]), _fmt(r["reranker"]), _fmt(r["metric"]),
                  _fmt(r["n_queries"]), _fmt(r["n_docs"]), _fmt(r["slope"], 4),
                  f"[{_fmt(r['ci_low'], 4)}, {_fmt(r['ci_high'], 4)}]", _p(r["p_value"])] for r in slopes]
        body += _table(["family", "corpus", "embedder", "reranker", "metric", "n queries", "n docs", "slope", "95% CI",
                        "p"], table)
    return _section("dose", "Dose-response over prefix depth", what, body)


def section_cuts(con: duckdb.DuckDBPyConnection, cells: list[Cell], metric: str) -> str:
    what = (f"Mean {metric} per condition within each query type (extractive / abstractive / boolean / ...) and, "
            "where the corpus has topic buckets, within each topic: where a treatment helps, not just whether.")
    body = ""
    order = {c: i for i, c in enumerate(condition_order())}
    cuts = _mart(con, "metric_cuts")
    if not cuts:
        return _section("cuts", "Per-query-type and per-topic cuts", what, _not_run("the metric_cuts mart is empty or absent"))
    for column, label in (("query_type", "query type"), ("topic_bucket", "topic")):
        rows = [{**r, column: r["cut_value"], "mean": r["mean_value"], "n": r["n_queries"]} for r in cuts
                if r["cut"] == column and r["metric"] == metric
                and any((r["corpus"], r["embedder"], r["reranker"]) == (c.corpus, c.embedder, c.reranker) for c in cells)]
        groups = sorted({r[column] for r in rows})
        if not rows or groups == ["(none)"]:
            body += f"<h3>By {label}</h3>" + _not_run(f"no {label} labels in the scored corpora")
            continue
        conds = sorted({r["condition"] for r in rows}, key=lambda c: order.get(c, 99))
        value = {(r["corpus"], r["condition"], r[column]): r for r in rows}
        for corpus in sorted({r["corpus"] for r in rows}):
            table = [[html.escape(c)] + [(_fmt(value[(corpus, c, g)]["mean"]) + f" <small>({value[(corpus, c, g)]['n']})</small>")
                                         if (corpus, c, g) in value else "–" for g in groups] for c in conds]
            body += f"<h3>By {label} · {html.escape(corpus)}</h3>" + _table(["condition", *groups], table, "means")
    return _section("cuts", "Per-query-type and per-topic cuts", what, body)


def section_budget(means: list[dict], cells: list[Cell]) -> str:
    what = ("Share of gold evidence characters inside the context a reader gets when chunks are taken in rank order "
            "up to a token budget (content + prefix tokens: prefixes pay their real cost); solid lines induced (A), "
            "dashed gold (G), dotted the placebo.")
    import matplotlib.pyplot as plt

    order = {c: i for i, c in enumerate(condition_order())}
    figs = ""
    for cell in cells:
        sub = [m for m in means if (m["corpus"], m["embedder"], m["reranker"]) == (cell.corpus, cell.embedder, cell.reranker)
               and _BUDGET.search(m["metric"])]
        if not sub:
            continue
        fig, ax = plt.subplots(figsize=(7, 4))
        colours = plt.get_cmap("tab20").colors
        for i, cond in enumerate(sorted({m["condition"] for m in sub}, key=lambda c: order.get(c, 99))):
            pts = sorted((int(_BUDGET.search(m["metric"]).group(2)), m["mean"]) for m in sub if m["condition"] == cond)
            style = "-" if cond.startswith("A") else "--" if cond.startswith("G") else ":"  # induced / gold / other
            ax.plot([b for b, _ in pts], [v for _, v in pts], style, marker="o", label=cond, color=colours[i % 20])
        ax.set_xscale("log", base=2)
        budgets = sorted({int(_BUDGET.search(m["metric"]).group(2)) for m in sub})
        ax.set_xticks(budgets, [str(b) for b in budgets])
        ax.set_xlabel("token budget (content + prefix tokens)")
        ax.set_ylabel("evidence coverage")
        ax.set_title(f"{cell.corpus} · {cell.embedder}", fontsize=9)
        ax.legend(fontsize=7, ncol=2)
        ax.grid(alpha=0.3)
        figs += _png(fig)
    return _section("budget", "Token-budget curves", what, figs or _not_run("no token-budget metrics in query_metrics"))


def section_routing(con: duckdb.DuckDBPyConnection) -> str:
    what = ("Two-stage retrieval keeps the 5 best top-level sections before ranking chunks; section recall is the share "
            "of judged queries (those with chunk-level evidence) for which a kept section overlaps the gold evidence.")
    rows = _mart(con, "section_recall_summary", "ORDER BY corpus, embedder, condition")
    if not rows:
        return _section("routing", "Two-stage section recall", what,
                        _not_run("no two-stage runs (A4, G4) were scored (section_recall_summary is empty or absent)"))
    table = [[_fmt(r["corpus"]), _fmt(r["embedder"]), _fmt(r["condition"]), _fmt(r["n_queries"]), _fmt(r["n_judged"]),
              _fmt(r["n_recalled"]), _fmt(r["section_recall"])] for r in rows]
    return _section("routing", "Two-stage section recall", what,
                    _table(["corpus", "embedder", "condition", "queries", "judged", "recalled", "section recall"], table))


def section_funnel(con: duckdb.DuckDBPyConnection) -> str:
    what = ("Every record the loaders read and what happened to it: inputs, what was kept, and each reason items "
            "were dropped (nothing is filtered silently). The figure shows the question funnel.")
    rows = _rows(con, "SELECT corpus, stage, reason, n FROM funnel ORDER BY corpus, stage, reason = 'input' DESC, reason = 'kept' DESC, reason")
    if not rows:
        return _section("funnel", "Data funnel", what, _not_run("the funnel table is empty (nothing was ingested)"))
    import matplotlib.pyplot as plt

    table = [[_fmt(r["corpus"]), _fmt(r["stage"]), _fmt(r["reason"]), _fmt(r["n"])] for r in rows]
    body = ""
    questions = [r for r in rows if r["stage"] == "questions" and r["n"]]
    if questions:
        fig, ax = plt.subplots(figsize=(7, 0.35 * len(questions) + 1))
        labels = [f"{r['corpus']}: {r['reason']}" for r in questions]
        ax.barh(range(len(questions))[::-1], [r["n"] for r in questions], color="#5d6d7e")
        ax.set_yticks(range(len(questions))[::-1], labels, fontsize=8)
        ax.set_xlabel("questions")
        body += _png(fig)
    body += "<details><summary>full funnel table</summary>" + _table(["corpus", "stage", "reason", "n"], table) + "</details>"
    return _section("funnel", "Data funnel", what, body)


def section_sizes(con: duckdb.DuckDBPyConnection) -> str:
    what = ("Fixed windows are size-matched to the structural chunks of the reference structure (induced when present, "
            "else gold): the table compares mean content tokens per chunkset (prefix tokens excluded), the histogram "
            "their distributions (whole-document chunks left out of the figure).")
    rows = _rows(con, """
        SELECT split_part(c.doc_id, '/', 1) AS corpus, c.chunkset, count(*) AS chunks,
               avg(c.content_tokens) AS mean_tokens, median(c.content_tokens) AS median_tokens
        FROM chunks c GROUP BY ALL ORDER BY ALL""")
    if not rows:
        return _section("sizes", "Size matching", what, _not_run("no chunks (the chunk stage did not run)"))
    import matplotlib.pyplot as plt

    table = [[_fmt(r["corpus"]), _fmt(r["chunkset"]), _fmt(r["chunks"]), _fmt(r["mean_tokens"], 1),
              _fmt(r["median_tokens"], 1)] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for chunkset in sorted({r["chunkset"] for r in rows} - {"doc"}):
        tokens = [t for (t,) in con.execute("SELECT content_tokens FROM chunks WHERE chunkset = ?", [chunkset]).fetchall()]
        ax.hist(tokens, bins=30, histtype="step", lw=1.5, label=chunkset)
    ax.set_xlabel("content tokens per chunk")
    ax.set_ylabel("chunks")
    ax.legend(fontsize=8)
    return _section("sizes", "Size matching", what,
                    _table(["corpus", "chunkset", "chunks", "mean content tokens", "median"], table) + _png(fig))


def section_not_run(not_run: dict[str, str]) -> str:
    what = "Conditions and contrasts this experiment did not produce, each with the reason (nothing is dropped silently)."
    if not not_run:
        return _section("notrun", "Not run", what, "<p>Everything configured ran.</p>")
    rows = [[html.escape(k), html.escape(v)] for k, v in sorted(not_run.items())]
    return _section("notrun", "Not run", what, _table(["condition / contrast", "reason"], rows))


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:1.8em}
h3{font-size:1em;margin:1.2em 0 .4em} table{border-collapse:collapse;margin:.5em 0;font-size:.86em}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left} th{background:#f3f3f3} td.num{text-align:right}
tr.primary td{background:#fdf2e9;font-weight:600} .what{color:#444;font-style:italic}
.notrun{color:#a04000} .banner{background:#fff3cd;border:2px solid #e0a800;padding:.8em 1em;font-weight:700;margin:1em 0}
.meta{color:#555;font-size:.9em} img{max-width:100%;display:block;margin:.5em 0} nav a{margin-right:1em}
"""


def render_report(con: duckdb.DuckDBPyConnection, config: ExperimentConfig, embedder_name: str,
                  not_run: dict[str, str] | None = None) -> str:
    """The whole report as one HTML string (see module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    not_run = dict(not_run or {})
    rows = contrast_rows(con)
    cells = primary_cells(config, embedder_name)
    metrics = metric_names(con, config.primary.metric)
    means = condition_means(con)
    banner = ('<div class="banner">DEMO NUMBERS, NOT RESULTS. This report was produced from the bundled demo '
              "corpus (five short papers written for this project); it shows what the pipeline produces, and its "
              "numbers support no claim. Run an experiment on real data (--config/--data) for results.</div>"
              if config.demo else "")
    corpora = ", ".join(f"{c.name} ({c.loader})" for c in config.corpora)
    meta = (f"<p class='meta'>Experiment <b>{html.escape(config.name)}</b> ({html.escape(config.description)}) · "
            f"corpora {html.escape(corpora)}" + (f", first {config.limit} documents" if config.limit else "")
            + f" · embedders {html.escape(', '.join(e.name + (' (strong)' if e.strong else '') for e in config.embedders))}"
            f" · rerankers {html.escape(', '.join(r.name for r in config.rerankers) or 'none')}"
            f" · inducer {html.escape(config.inducer)} · k = {config.k} · primary cell: "
            f"{html.escape(config.primary.metric)} × {html.escape(embedder_name)} × reranker {html.escape(config.primary.reranker)}</p>")
    nav = "<nav>" + "".join(f'<a href="#{a}">{t}</a>' for a, t in (
        ("contrasts", "contrasts"), ("forest", "forest plot"), ("means", "means"), ("dose", "dose-response"),
        ("cuts", "cuts"), ("budget", "token budget"), ("routing", "section recall"), ("funnel", "funnel"),
        ("sizes", "size matching"), ("notrun", "not run"))) + "</nav>"
    sections = [
        section_contrasts(rows, config, not_run, _mart(con, "primary_contrasts", "ORDER BY corpus, contrast")),
        section_forest(rows),
        section_means(means, cells, metrics, not_run),
        section_dose(means, cells, config.primary.metric,
                     _mart(con, "dose_response", "ORDER BY corpus, embedder, reranker, family")),
        section_cuts(con, cells, config.primary.metric),
        section_budget(means, cells),
        section_routing(con),
        section_funnel(con),
        section_sizes(con),
        section_not_run(not_run),
    ]
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>ragwarehouse report: {html.escape(config.name)}</title><style>{_CSS}</style></head><body>"
            f"<h1>ragwarehouse report: {html.escape(config.name)}</h1>{banner}{meta}{nav}{''.join(sections)}</body></html>")


def write_report(con: duckdb.DuckDBPyConnection, config: ExperimentConfig, path: str | Path,
                 not_run: dict[str, str] | None = None) -> Path:
    """Render the report and write it to ``path`` (parent folders created). Returns the path."""
    from ingest.embedders import resolve_embedder

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    page = render_report(con, config, resolve_embedder(config.primary.embedder).name, not_run)
    target.write_text(page, encoding="utf-8")
    return target
