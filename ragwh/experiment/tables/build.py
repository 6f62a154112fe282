"""From a :class:`~ragwh.experiment.tables.spec.TableDef` and the warehouse to rendered tables (one per group)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from ragwh.experiment.report.data import fetch_rows, relation_exists
from ragwh.experiment.tables.spec import Cell, Col, Rendered, TableDef


@dataclass(frozen=True)
class Context:
    """What the definitions read besides the marts: the primary cells (corpus, embedder, reranker), the
    primary metric, the metric order, the condition order, the label every caption carries and notes that
    one table's caption adds (Table 1: the pre-registered contrasts that did not run, and why)."""

    cells: tuple[tuple[str, str, str], ...] = ()
    primary_metric: str = "cov-nDCG@10"
    metrics: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()
    label: str = ""
    notes: tuple[tuple[str, str], ...] = ()  # (table name, a sentence its caption adds before the label)


def skipped_reason(con: duckdb.DuckDBPyConnection, definition: TableDef) -> str | None:
    """Why a table cannot be written (its mart absent or empty), or None."""
    if not relation_exists(con, definition.requires):
        return f"{definition.requires} was not built"
    if not con.execute(f"SELECT count(*) FROM {definition.requires}").fetchone()[0]:
        return f"{definition.requires} holds no rows"
    return None


def build(con: duckdb.DuckDBPyConnection, definition: TableDef, ctx: Context) -> list[Rendered]:
    """Every group's table (empty list when the mart is absent, empty, or holds no row for the context)."""
    if skipped_reason(con, definition):
        return []
    records = fetch_rows(con, definition.sql, definition.params(ctx) if definition.params else None)
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(tuple(r.get(g) for g in definition.group_by), []).append(r)
    out = []
    for key, rows in groups.items():
        group = dict(zip(definition.group_by, key))
        headers, cells, raw, prefixes = _layout(definition, rows, ctx)
        _bold_best(definition, headers, cells)
        label = " ".join(filter(None, (dict(ctx.notes).get(definition.name, ""), ctx.label)))
        out.append(Rendered(definition, group, headers, cells, raw, label, prefixes))
    return out


def _layout(definition: TableDef, rows: list[dict], ctx: Context):
    if definition.pivot is None:
        cells = [[c.cell(r) for c in definition.columns] for r in rows]
        prefixes = [definition.marker(r) if definition.marker else "" for r in rows]
        return [c.header for c in definition.columns], cells, rows, prefixes
    p = definition.pivot
    values = p.values(rows)
    by_key: dict[tuple, dict[str, dict]] = {}
    for r in rows:
        by_key.setdefault(tuple(r[k] for k in p.row_key), {})[r[p.key]] = r
    cells, raw = [], []
    for key, per_value in by_key.items():
        first = next(iter(per_value.values()))
        row = [c.cell(first) for c in definition.columns]
        row += [p.col.cell(per_value[v]) if v in per_value else Cell("–", numeric=True) for v in values]
        cells.append(row)
        raw.extend(per_value[v] for v in values if v in per_value)
    return [c.header for c in definition.columns] + list(values), cells, raw, [""] * len(cells)


def _bold_best(definition: TableDef, headers: list[str], cells: list[list[Cell]]) -> None:
    """Bold the best displayed value of every column whose definition asks for it (ties: all of them)."""
    wants: dict[int, str] = {j: c.best for j, c in enumerate(definition.columns) if c.best}
    if definition.pivot is not None and definition.pivot.col.best:
        wants.update({j: definition.pivot.col.best for j in range(len(definition.columns), len(headers))})
    for j, how in wants.items():
        values = [row[j].sort_value for row in cells if row[j].sort_value is not None]
        if len(values) < 2:
            continue
        best = max(values) if how == "max" else min(values)
        for row in cells:
            if row[j].sort_value == best:
                row[j] = Cell(row[j].text, row[j].numeric, True, row[j].marks, row[j].sort_value)


def column(header: str, field: str = "", kind: str = "num", **kw: Any) -> Col:
    """Shorthand for :class:`Col` in the definition modules."""
    return Col(header, field, kind, **kw)
