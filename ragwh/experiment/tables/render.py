"""Every format of a paper table from one :class:`~ragwh.experiment.tables.spec.Rendered`: LaTeX (booktabs,
compiles as is: :func:`latex_document` wraps the tables), CSV (the raw records, full precision: reading it
back gives the mart's numbers), Markdown and the HTML of the report."""

from __future__ import annotations

import csv
import html
import io
import math
import re

from ragwh.experiment.tables.spec import Rendered

_LATEX_CHARS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "−": "$-$",
    "–": "--",
    "—": "---",
    "±": r"$\pm$",
    "Δ": r"$\Delta$",
    "·": r"$\cdot$",
    "★": r"$\star$",
    "›": r"$\rangle$",
    "×": r"$\times$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "<": r"$<$",
    ">": r"$>$",
    "τ": r"$\tau$",
    "|": r"$|$",
}


def latex_escape(text: str) -> str:
    """Text safe in a LaTeX table cell: specials escaped, the few non-ASCII signs tables use mapped to
    math, anything else non-ASCII replaced by '?' (pdflatex would stop on it)."""
    out = []
    for ch in str(text):
        if ch in _LATEX_CHARS:
            out.append(_LATEX_CHARS[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:
            out.append("?")
    return "".join(out)


def _latex_cell(cell, pad: int) -> str:
    text = latex_escape(cell.text)
    if cell.bold:
        text = r"\textbf{" + text + "}"
    if cell.marks or pad:
        text += r"\textsuperscript{" + cell.marks + "}" if cell.marks else ""
        if pad > len(cell.marks):
            text += r"\hphantom{\textsuperscript{" + "*" * (pad - len(cell.marks)) + "}}"
    return text


def to_latex(table: Rendered) -> str:
    """One ``table`` float: booktabs rules, the caption (with the demo / tiny-model label), resized to the
    column width. Marks are superscripts padded with phantoms so numbers stay aligned (ranx's convention)."""
    n = len(table.headers)
    pads = [max((len(r[j].marks) for r in table.rows), default=0) for j in range(n)]
    align = "".join("r" if any(r[j].numeric for r in table.rows) else "l" for j in range(n))
    label = re.sub(r"[^a-z0-9]+", "-", (table.definition.name + "-" + "-".join(map(str, table.group.values()))).lower())
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\caption{" + latex_escape(table.caption) + "}",
        r"\label{tab:" + label.strip("-") + "}",
        r"\resizebox{\columnwidth}{!}{%",
        r"\begin{tabular}{" + align + "}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in table.headers) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(_latex_cell(c, pads[j]) for j, c in enumerate(row)) + r" \\" for row in table.rows]
    lines += [r"\bottomrule", r"\end{tabular}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def latex_document(inputs: list[str]) -> str:
    """A standalone document that ``\\input``s the table files (``pdflatex tables.tex`` compiles it as is)."""
    body = "\n".join(r"\input{" + name + "}" for name in inputs)
    return (
        "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs}\n\\usepackage{graphicx}\n"
        "\\begin{document}\n" + body + "\n\\end{document}\n"
    )


def to_markdown(table: Rendered) -> str:
    """A GitHub table under the caption; bold as **x**, marks as escaped asterisks."""

    def cell(c) -> str:
        text = c.text.replace("|", "\\|")
        text = f"**{text}**" if c.bold else text
        return text + c.marks.replace("*", "\\*")

    n = len(table.headers)
    align = ["---:" if any(r[j].numeric for r in table.rows) else "---" for j in range(n)]
    lines = [f"**{table.caption}**", "", "| " + " | ".join(table.headers) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"


def to_html(table: Rendered, cls: str = "") -> str:
    """The report's table markup (right-aligned numbers, <b> best, <sup> marks, the definition's marker)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.headers)
    rows = []
    for prefix, row in zip(table.prefixes or [""] * len(table.rows), table.rows):
        cells = []
        for j, c in enumerate(row):
            text = html.escape((prefix if j == 0 else "") + c.text)
            text = f"<b>{text}</b>" if c.bold else text
            text += f"<sup>{html.escape(c.marks)}</sup>" if c.marks else ""
            cells.append(f'<td class="num">{text}</td>' if c.numeric else f"<td>{text}</td>")
        attr = ' class="primary"' if prefix.startswith("★") else ""
        rows.append(f"<tr{attr}>" + "".join(cells) + "</tr>")
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def to_csv(tables: list[Rendered]) -> str:
    """The raw records of every group of one definition: one row per record, the group fields first, values
    at full precision (``repr`` of floats), so reading the file back gives the mart's numbers."""
    fields: list[str] = []
    for t in tables:
        for r in t.records:
            for k in r:
                if k not in fields:
                    fields.append(k)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(fields)
    for t in tables:
        for r in t.records:
            writer.writerow([_csv_value(r.get(k)) for k in fields])
    return buffer.getvalue()


def _csv_value(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    return str(value)
