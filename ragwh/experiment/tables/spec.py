"""Paper tables as data: a :class:`TableDef` (where the rows come from, which columns show what) becomes a
:class:`Rendered` table of :class:`Cell` s that every format (LaTeX, CSV, Markdown, the HTML report) renders.

A definition is declarative: a mart query (``sql``, returning one record per row, its fields the
raw values), the columns (:class:`Col`: header, the field(s) shown, how, how many digits, whether the
column's best value is bold, which field's p-value puts significance marks on it) and the grouping
(one sub-table per cell, e.g. per corpus x embedder x reranker). ``pivot`` turns long mart rows
(one per metric) into one column per value. Rounding: the digits of each column (3 decimals for
metric values, deltas and intervals, 2 for effect sizes, p as 3 decimals, '<0.001' below, and a
bootstrap p of exactly 0 as '< m/B'); bold marks the best value as displayed (rounded), like ranx.
Significance marks: ``*`` p < 0.05, ``**`` p < 0.01, ``***`` p < 0.001.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

MARKS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))


def marks_for(p: float | None) -> str:
    """'***' for p < 0.001, '**' < 0.01, '*' < 0.05, else ''."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    return next((m for cut, m in MARKS if p < cut), "")


@dataclass(frozen=True)
class Cell:
    """One displayed cell: ``text`` (plain, with Unicode minus and dashes), whether it is numeric
    (right-aligned), bold (best of its column) and its significance ``marks``."""

    text: str
    numeric: bool = False
    bold: bool = False
    marks: str = ""
    sort_value: float | None = None  # what 'best' compares (the displayed, rounded value)


def number(value: Any, digits: int = 3, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    return text.replace("-", "−")


def p_text(value: Any, n_boot: int | None = None, scale: int = 1) -> str:
    """A p-value as shown in the papers: '–' when absent, '< m/B' for a bootstrap p of exactly 0, '<0.001'
    below 0.001, else three decimals."""
    if value is None:
        return "–"
    if value == 0 and n_boot:
        return f"< {scale}/{n_boot:,}"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


@dataclass(frozen=True)
class Col:
    """One displayed column.

    ``kind``: ``num`` (``field`` with ``digits``), ``delta`` (signed), ``int``, ``text``, ``ci``
    (``[lo, hi]`` of ``fields``), ``mean_ci`` (``mean [lo, hi]``), ``mean_sd`` (``mean ± sd``), ``p``
    (``field``; ``fields`` = (n_boot, family size) for the '< m/B' form), ``pct`` (percent, 1 decimal).
    ``best``: 'max' | 'min' bolds the column's best displayed value per table; ``marks``: the field whose
    p-value adds significance marks."""

    header: str
    field: str = ""
    kind: str = "num"
    digits: int = 3
    fields: tuple[str, ...] = ()
    best: str | None = None
    marks: str | None = None

    def cell(self, r: dict) -> Cell:
        get = r.get
        if self.kind == "text":
            return Cell("–" if get(self.field) is None else str(get(self.field)))
        if self.kind == "int":
            v = get(self.field)
            return Cell("–" if v is None else f"{int(v)}", numeric=True)
        if self.kind == "p":
            n_boot = get(self.fields[0]) if self.fields else None
            scale = (get(self.fields[1]) if len(self.fields) > 1 else 1) or 1
            return Cell(p_text(get(self.field), n_boot, scale), numeric=True)
        if self.kind == "ci":
            lo, hi = (get(f) for f in self.fields)
            signed = self.digits < 0
            d = abs(self.digits)
            return Cell(f"[{number(lo, d, signed)}, {number(hi, d, signed)}]", numeric=True)
        if self.kind == "mean_ci":
            mean, lo, hi = (get(f) for f in self.fields)
            text = number(mean, self.digits) + (
                "" if lo is None else f" [{number(lo, self.digits)}, {number(hi, self.digits)}]"
            )
            return self._scored(text, mean, r)
        if self.kind == "mean_sd":
            mean, sd = (get(f) for f in self.fields)
            text = number(mean, self.digits) + ("" if sd is None else f" ± {number(sd, self.digits)}")
            return self._scored(text, mean, r)
        if self.kind == "pct":
            v = get(self.field)
            return self._scored("–" if v is None else f"{100 * v:.1f}%", v, r)
        return self._scored(number(get(self.field), self.digits, signed=self.kind == "delta"), get(self.field), r)

    def _scored(self, text: str, value, r: dict) -> Cell:
        rounded = (
            None if value is None or (isinstance(value, float) and math.isnan(value)) else round(value, self.digits)
        )
        return Cell(text, numeric=True, marks=marks_for(r.get(self.marks)) if self.marks else "", sort_value=rounded)


@dataclass(frozen=True)
class Pivot:
    """Long rows -> one row per ``row_key`` with one column per ``values`` entry of ``key`` (each rendered
    by ``col``, whose fields are read from that value's long row)."""

    key: str
    row_key: tuple[str, ...]
    col: Col
    values: Callable[[list[dict]], list[str]]


@dataclass(frozen=True)
class TableDef:
    """A paper table (module docstring). ``sql`` reads marts; ``requires`` names the mart whose absence or
    emptiness skips the table with a reason; ``caption`` is the table's own sentence(s)."""

    name: str
    title: str
    caption: str
    requires: str
    sql: str
    columns: tuple[Col, ...]
    group_by: tuple[str, ...] = ("corpus", "embedder", "reranker")
    pivot: Pivot | None = None
    params: Callable[[Any], list] | None = None  # SQL parameters from the export context
    marker: Callable[[dict], str] | None = None  # a prefix for the first cell in the HTML report (★ primary)
    legend: str = ""  # what the marks / bold mean, appended to the caption


@dataclass
class Rendered:
    """One table of a definition for one group: headers, rows of cells, the raw records behind them."""

    definition: TableDef
    group: dict
    headers: list[str]
    rows: list[list[Cell]]
    records: list[dict]
    label: str = ""  # the demo / tiny-model label, in the caption
    prefixes: list[str] = field(default_factory=list)

    @property
    def caption(self) -> str:
        where = " · ".join(str(v) for v in self.group.values())
        text = f"{self.definition.title}" + (f" ({where})" if where else "") + f". {self.definition.caption}"
        if self.definition.legend:
            text += " " + self.definition.legend
        return text + (f" {self.label}" if self.label else "")
