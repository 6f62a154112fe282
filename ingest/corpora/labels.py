"""``ragwh label add FILE.csv --on queries|documents``: an analyst's labels into table ``labels``.

The CSV's header names the id column first (any name: ``query_id``, ``doc_id``), then one column per
label (any number, at least one); every value is text. Row i gives id i's value of each label; an empty
cell gives that id no value of that label (it falls in none of the label's slices). Rules, checked before
anything is written (one line naming the file and line, nothing written): the file is UTF-8 CSV with a
header; a label name is non-empty, given once, and not a built-in label's (``seeds/slice_labels.csv``);
every row has the header's number of fields; an id is a ``queries.query_id`` (``--on queries``) or a
``documents.doc_id`` (``--on documents``) of the warehouse, given once; a label name is not already
the other entity's. Adding a label again replaces it
(every row of that (entity, label) is deleted, the file's inserted, in one transaction).

Stored long: ``labels(entity, id, label, value, origin = 'analyst', source_file)``. A document's label
slices the queries whose ``doc_id`` is that document (``int_query_labels``); queries without a document
(BEIR, HotpotQA) take no document label.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from warehouse.db import replace_where, transaction
from warehouse.paths import seed_rows

ENTITIES = {"queries": ("queries", "query_id"), "documents": ("documents", "doc_id")}


class LabelError(ValueError):
    """A label file that cannot be loaded; the message names the file and line."""


@dataclass(frozen=True)
class AddedLabels:
    entity: str
    labels: tuple[str, ...]
    n_ids: int
    n_values: int
    replaced: tuple[str, ...]  # labels that existed before and were replaced


def builtin_labels() -> dict[str, str]:
    """Built-in label -> its origin ('warehouse' | 'loader'), from ``seeds/slice_labels.csv``."""
    return {row["label"]: row["origin"] for row in seed_rows("slice_labels")[1]}


def _fail(path: Path, number: int | None, problem: str) -> LabelError:
    return LabelError(f"{path}:{number}: {problem}" if number is not None else f"{path}: {problem}")


def read_labels(path: Path, known_ids: set[str], entity: str) -> tuple[list[str], list[tuple[str, str, str]]]:
    """(label names, (id, label, value) rows) of a label CSV, validated (module docstring)."""
    try:
        handle = open(path, encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise _fail(path, None, f"cannot read the label file: {exc.strerror}") from None
    reserved = builtin_labels()
    rows: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if header is None:
                raise _fail(path, None, "the file is empty (expected a header: id, then label columns)")
            names = [h.strip() for h in header]
            if len(names) < 2:
                raise _fail(path, 1, "the header needs the id column, then at least one label column")
            labels = names[1:]
            for i, name in enumerate(labels):
                if not name:
                    raise _fail(path, 1, f"label column {i + 2} has no name")
                if name in labels[:i]:
                    raise _fail(path, 1, f"label {name!r} is given twice")
                if name in reserved:
                    raise _fail(
                        path, 1, f"label {name!r} is a built-in label (seeds/slice_labels.csv): name it otherwise"
                    )
            for fields in reader:
                number = reader.line_num
                if not any(f.strip() for f in fields):
                    continue
                if len(fields) != len(names):
                    raise _fail(path, number, f"expected {len(names)} fields ({', '.join(names)}), got {len(fields)}")
                ident = fields[0].strip()
                if ident not in known_ids:
                    raise _fail(
                        path, number, f"unknown {ENTITIES[entity][1]} {ident!r} (not in the warehouse's {entity})"
                    )
                if ident in seen:
                    raise _fail(
                        path, number, f"{ENTITIES[entity][1]} {ident!r} is given twice (first on line {seen[ident]})"
                    )
                seen[ident] = number
                rows.extend((ident, label, value.strip()) for label, value in zip(labels, fields[1:]) if value.strip())
        except csv.Error as exc:
            raise _fail(path, reader.line_num, f"not valid CSV: {exc}") from None
        except UnicodeDecodeError as exc:
            raise _fail(path, None, f"not UTF-8 (byte {exc.start})") from None
    if not seen:
        raise _fail(path, None, "the file holds no labelled id")
    return labels, rows


def add_labels(con: duckdb.DuckDBPyConnection, path: str | Path, entity: str) -> AddedLabels:
    """Validate a label CSV and store it, replacing the labels it names (module docstring); raises
    :class:`LabelError`, writing nothing."""
    path = Path(path)
    if entity not in ENTITIES:
        raise _fail(path, None, f"--on must be one of {', '.join(ENTITIES)}, got {entity!r}")
    table, column = ENTITIES[entity]
    known = {r[0] for r in con.execute(f"SELECT {column} FROM {table}").fetchall()}
    labels, rows = read_labels(path, known, entity)
    other = [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT label FROM labels WHERE entity <> ? AND label IN (SELECT unnest(?::VARCHAR[])) ORDER BY 1",
            [entity, labels],
        ).fetchall()
    ]
    if other:
        raise _fail(path, 1, f"label {other[0]!r} is already a label of the other entity: name it otherwise")
    replaced = tuple(
        r[0]
        for r in con.execute(
            "SELECT DISTINCT label FROM labels WHERE entity = ? AND label IN (SELECT unnest(?::VARCHAR[])) ORDER BY 1",
            [entity, labels],
        ).fetchall()
    )
    data = pa.table(
        {
            "entity": pa.array([entity] * len(rows), pa.string()),
            "id": pa.array([r[0] for r in rows], pa.string()),
            "label": pa.array([r[1] for r in rows], pa.string()),
            "value": pa.array([r[2] for r in rows], pa.string()),
            "origin": pa.array(["analyst"] * len(rows), pa.string()),
            "source_file": pa.array([str(path)] * len(rows), pa.string()),
        }
    )
    with transaction(con):
        replace_where(con, "labels", "entity = ? AND label IN (SELECT unnest(?::VARCHAR[]))", [entity, labels], data)
    return AddedLabels(entity, tuple(labels), len({r[0] for r in rows}), len(rows), replaced)
