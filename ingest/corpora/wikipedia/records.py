"""Wikipedia source records: a MediaWiki XML export and the JSONL with a ``wikitext`` field, read into
one typed form so both layouts feed the same normalizer.

* XML (any export schema version: element names are matched without their XML namespace): each
  ``<page>`` gives ``title``, ``ns``, ``id`` (the page's, not the revision's), an optional
  ``<redirect>`` element and the text of its last ``<revision>``.
* JSONL: one object a line with ``title``, ``page_id`` and ``wikitext`` (``ns`` optional, default 0);
  blank lines are skipped. Other fields (including a pre-extracted ``categories``) are ignored, so both
  layouts go through the same category extraction.

A page is a redirect when the XML marks it (``<redirect>``) or its wikitext starts with the
``#REDIRECT`` magic word (the only signal a JSONL line carries).

Bad input raises :class:`ingest.errors.IngestError` naming the file and the record (the page title, or
the line / byte position where no title can be read): non-UTF-8 bytes, malformed XML or JSON, a missing
or mistyped field, a page id that is not a non-negative integer, a page id seen twice, a file without pages.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.corpora.jsonl import iter_jsonl
from ingest.errors import IngestError

_REDIRECT = re.compile(r"\s*#redirect\b", re.IGNORECASE)


@dataclass(frozen=True)
class WikiRecord:
    """One page as read from either layout; ``record`` names it in error messages."""

    page_id: int
    title: str
    ns: int
    redirect: bool
    wikitext: str
    record: str


def read_records(path: Path) -> list[WikiRecord]:
    """All pages of ``path`` (``.xml`` -> MediaWiki export, ``.jsonl``/``.json`` -> JSONL), in file order."""
    path = Path(path)
    if not path.is_file():
        raise IngestError(str(path), None, "file not found", "pass a MediaWiki XML export or a JSONL file")
    suffix = path.suffix.lower()
    if suffix == ".xml":
        records = _read_xml(path, path.read_bytes())
    elif suffix in (".jsonl", ".json"):
        records = _read_jsonl(path)
    else:
        raise IngestError(str(path), None, f"unknown file type {suffix!r}", "expected .xml or .jsonl")
    if not records:
        raise IngestError(
            str(path), None, "no pages found", "expected <page> elements (XML) or one JSON object per line (JSONL)"
        )
    seen: dict[int, str] = {}
    for r in records:
        if r.page_id in seen:
            raise IngestError(
                str(path),
                r.record,
                f"page id {r.page_id} also appears in {seen[r.page_id]}",
                "remove the duplicate page",
            )
        seen[r.page_id] = r.record
    return records


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _page_id(file: Path, record: str, value: Any, field: str) -> int:
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit())):
        raise IngestError(str(file), record, f"field {field!r} is {value!r}, not a non-negative integer")
    number = int(value)
    if number < 0:
        raise IngestError(str(file), record, f"field {field!r} is negative ({number})")
    return number


def _read_xml(path: Path, raw: bytes) -> list[WikiRecord]:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        titles = re.findall(rb"<(?:\w+:)?title>(.*?)</", raw[: exc.start])
        where = f"page {titles[-1].decode('utf-8', 'replace')!r}" if titles else "before the first page"
        raise IngestError(
            str(path), f"{where}, byte {exc.start}", f"not valid UTF-8 ({exc.reason})", "re-export the file as UTF-8"
        ) from None
    records: list[WikiRecord] = []
    last_title: str | None = None
    try:
        for _, elem in ET.iterparse(io.BytesIO(raw), events=("end",)):
            name = _local(elem.tag)
            if name == "title":
                last_title = elem.text or ""
            if name != "page":
                continue
            records.append(_xml_page(path, elem, len(records) + 1))
            elem.clear()
    except ET.ParseError as exc:
        line, column = exc.position
        where = f"after page {last_title!r}" if last_title is not None else "before the first page"
        raise IngestError(
            str(path),
            f"{where} (line {line}, column {column})",
            f"malformed XML: {exc}",
            "check that the export is complete and well-formed",
        ) from None
    return records


def _xml_page(path: Path, page: ET.Element, position: int) -> WikiRecord:
    children = {_local(c.tag): c for c in page}
    title_elem = children.get("title")
    record = f"page {title_elem.text!r}" if title_elem is not None and title_elem.text else f"page #{position}"
    for field in ("title", "ns", "id", "revision"):
        if field not in children:
            raise IngestError(str(path), record, f"<page> has no <{field}> element")
    title = (title_elem.text or "").strip()
    if not title:
        raise IngestError(str(path), record, "<title> is empty")
    ns_text = (children["ns"].text or "").strip()
    if not re.fullmatch(r"-?\d+", ns_text):
        raise IngestError(str(path), record, f"<ns> is {ns_text!r}, not an integer")
    revisions = [c for c in page if _local(c.tag) == "revision"]
    text_elems = [c for c in revisions[-1] if _local(c.tag) == "text"]
    if not text_elems:
        raise IngestError(str(path), record, "the last <revision> has no <text> element")
    wikitext = text_elems[0].text or ""
    return WikiRecord(
        page_id=_page_id(path, record, (children["id"].text or "").strip(), "id"),
        title=title,
        ns=int(ns_text),
        redirect="redirect" in children or bool(_REDIRECT.match(wikitext)),
        wikitext=wikitext,
        record=record,
    )


def _read_jsonl(path: Path) -> list[WikiRecord]:
    records: list[WikiRecord] = []
    for number, obj in iter_jsonl(path):
        where = f"line {number}"
        title = obj.get("title")
        record = f"{where} (page {title!r})" if isinstance(title, str) and title.strip() else where
        for field in ("title", "page_id", "wikitext"):
            if field not in obj or obj[field] is None:
                raise IngestError(str(path), record, f"missing field {field!r}")
        if not isinstance(title, str) or not title.strip():
            raise IngestError(str(path), record, f"field 'title' is {title!r}, not a non-empty string")
        if not isinstance(obj["wikitext"], str):
            raise IngestError(str(path), record, f"field 'wikitext' is {type(obj['wikitext']).__name__}, not a string")
        ns = obj.get("ns", 0)
        if isinstance(ns, bool) or not isinstance(ns, int):
            raise IngestError(str(path), record, f"field 'ns' is {ns!r}, not an integer")
        records.append(
            WikiRecord(
                page_id=_page_id(path, record, obj["page_id"], "page_id"),
                title=title.strip(),
                ns=ns,
                redirect=bool(_REDIRECT.match(obj["wikitext"])),
                wikitext=obj["wikitext"],
                record=record,
            )
        )
    return records
