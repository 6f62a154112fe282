"""Stream the elements of a (large) JSON array file one at a time, in constant memory.

HotpotQA's train file (``hotpot_train_v1.1.json``, ~566 MB, 90,447 questions) is one JSON list:
``json.load`` would hold all of it as Python objects (several GB). :func:`iter_json_array` reads the
file in blocks of :data:`BLOCK` characters and decodes one element at a time with
``json.JSONDecoder.raw_decode``, keeping only the undecoded tail in memory. An element that does not
decode within :data:`MAX_ELEMENT` characters, a missing ``[`` / ``,`` / ``]``, trailing text or bytes
that are not UTF-8 raise :class:`~ingest.errors.IngestError` naming the file and the line.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Iterator

from ingest.corpora.utf8 import not_utf8
from ingest.errors import IngestError

BLOCK = 1 << 20  # bytes read per refill
MAX_ELEMENT = 64 << 20  # an element that has not decoded within this many characters is an error
_WS = " \t\n\r"


class _Reader:
    def __init__(self, path: Path, fh) -> None:
        self.path, self.fh = path, fh
        self.buf, self.pos, self.line = "", 0, 1  # line number of buf[0]
        self.eof = False
        self.decoder, self.offset = codecs.getincrementaldecoder("utf-8")(), 0  # bytes read so far

    def fill(self) -> bool:
        """Append a block; False at end of file."""
        if self.eof:
            return False
        raw = self.fh.read(BLOCK)
        self.offset += len(raw)
        try:
            block = self.decoder.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:  # exc.object: the undecoded bytes of earlier reads, then ``raw``
            start = self.offset - len(exc.object) + exc.start
            line = self.line_at(len(self.buf)) + exc.object[: exc.start].count(b"\n")
            raise not_utf8(str(self.path), line, exc.object[exc.start], start) from None
        if not block and not raw:
            self.eof = True
            return False
        self.line += self.buf.count("\n", 0, self.pos)
        self.buf = self.buf[self.pos :] + block
        self.pos = 0
        return True

    def line_at(self, index: int) -> int:
        return self.line + self.buf.count("\n", 0, index)

    def skip_ws(self) -> str | None:
        """The next non-whitespace character (not consumed), None at end of file."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WS:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return None

    def fail(self, problem: str, index: int | None = None) -> IngestError:
        return IngestError(str(self.path), f"line {self.line_at(self.pos if index is None else index)}", problem)


def iter_json_array(path: Path, what: str = "a JSON list") -> Iterator[tuple[int, object]]:
    """Yield ``(index, element)`` of the JSON array in ``path`` (see module doc)."""
    decoder = json.JSONDecoder()
    with open(path, "rb") as fh:
        r = _Reader(path, fh)
        first = r.skip_ws()
        if first != "[":
            raise IngestError(str(path), None, f"expected {what}")
        r.pos += 1
        index = 0
        if r.skip_ws() == "]":
            r.pos += 1
        else:
            while True:
                if r.skip_ws() is None:
                    raise r.fail("invalid JSON: the list is not closed")
                while True:
                    try:
                        element, end = decoder.raw_decode(r.buf, r.pos)
                        break
                    except json.JSONDecodeError as exc:
                        if len(r.buf) - r.pos > MAX_ELEMENT or not r.fill():
                            raise r.fail(f"invalid JSON: {exc.msg}", exc.pos) from None
                r.pos = end
                yield index, element
                index += 1
                sep = r.skip_ws()
                if sep == ",":
                    r.pos += 1
                    continue
                if sep == "]":
                    r.pos += 1
                    break
                raise r.fail("invalid JSON: expected ',' or ']' after a list element")
        if r.skip_ws() is not None:
            raise r.fail("invalid JSON: text after the closing ']'")
