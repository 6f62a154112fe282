"""Source files read as UTF-8, with the error every loader gives for bytes that are not: the file,
the line (1-based) and the byte offset (0-based, from the start of the file) of the first bad byte."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ingest.errors import IngestError

HINT = "re-encode the file as UTF-8"


def not_utf8(name: str, line: int, byte: int, offset: int) -> IngestError:
    """The error for ``byte`` at file ``offset`` (0-based) on ``line`` (1-based) of ``name``."""
    return IngestError(name, f"line {line}", f"byte 0x{byte:02x} at offset {offset} is not valid UTF-8", HINT)


def decode(name: str, raw: bytes) -> str:
    """``raw`` (a whole file's bytes) as text; bad bytes raise :class:`IngestError` naming ``name`` and the line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(name, raw[: exc.start].count(b"\n") + 1, raw[exc.start], exc.start) from None


def read_text(path: Path) -> str:
    """The whole file as text (see :func:`decode`)."""
    return decode(str(path), Path(path).read_bytes())


def lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line)`` of a file read line by line (streamed, newline kept); a line
    that is not UTF-8 raises :class:`IngestError` naming the file, the line and the file offset."""
    offset = 0
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise not_utf8(str(path), number, raw[exc.start], offset + exc.start) from None
            yield number, text
            offset += len(raw)
