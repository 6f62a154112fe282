"""The one reader of JSON Lines files every loader uses (BEIR corpora and queries, AmbigNQ passages,
EnterpriseRAG-Bench questions and slices, QASPER ``.jsonl``, Wikipedia ``.jsonl``).

Each non-blank line must be one JSON **object**. Anything else is an :class:`~ingest.errors.IngestError`
naming the file and the line (1-based): bytes that are not UTF-8 (with the byte offset in the file,
:mod:`ingest.corpora.utf8`), a line that is not JSON (``invalid JSON: <reason> (column C)``), a line that
is JSON but not an object (``[1, 2]``, ``null``, ``"text"``), and, when ``required`` names fields, a
record where one of them is missing or not a string.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from ingest.corpora.utf8 import lines
from ingest.errors import IngestError

_JSON_TYPES = {
    list: "a list",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}


def json_kind(value: object) -> str:
    """How a JSON value reads in an error: 'a list', 'null', 'a number', ..."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def iter_jsonl(
    path: Path | str, required: tuple[str, ...] = (), missing_hint: str | None = None
) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, object)`` of every non-blank line of ``path`` (see module doc).
    ``missing_hint`` is added to the 'file not found' error."""
    path = Path(path)
    if not path.is_file():
        raise IngestError(str(path), None, "file not found", missing_hint)
    for number, line in lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(
                str(path),
                f"line {number}",
                f"invalid JSON: {exc.msg} (column {exc.colno})",
                "each line must be one JSON object",
            ) from None
        if not isinstance(record, dict):
            raise IngestError(
                str(path),
                f"line {number}",
                f"expected a JSON object, got {json_kind(record)}",
                "each line must be one JSON object",
            )
        missing = [k for k in required if not isinstance(record.get(k), str)]
        if missing:
            raise IngestError(str(path), f"line {number}", f"missing or non-string field(s) {missing}")
        yield number, record
