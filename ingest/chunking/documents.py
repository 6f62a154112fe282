"""The documents the chunking stage reads, and the chunks it makes of them.

:func:`read_documents` loads ``documents``, ``paragraphs`` and every structure in ``sections`` for a
corpus (all corpora when None), checking paragraph order and re-verifying each structure with
:func:`ingest.structure.segments.verify_sections`: a chunk is only ever cut from a verified tree.
Offsets are character offsets into ``documents.text``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from ingest.errors import IngestError
from ingest.structure.segments import SectionRow, verify_sections


@dataclass
class Doc:
    """One document: its text, paragraph spans ``(char_start, char_end)`` and verified structures."""

    doc_id: str
    corpus: str
    title: str
    text: str
    paragraphs: list[tuple[int, int]] = field(default_factory=list)
    structures: dict[str, list[SectionRow]] = field(default_factory=dict)


@dataclass
class Chunk:
    """One chunk ``[char_start, char_end)`` of a document in a chunkset; ``content_tokens`` counts the stripped text."""

    chunkset: str
    doc_id: str
    chunk_idx: int
    char_start: int
    char_end: int
    section_idx: int | None
    content_tokens: int = 0

    @property
    def chunk_id(self) -> str:
        return f"{self.chunkset}|{self.doc_id}|{self.chunk_idx}"


def read_documents(con: duckdb.DuckDBPyConnection, corpus: str | None) -> dict[str, Doc]:
    where, params = ("WHERE d.corpus = ?", [corpus]) if corpus is not None else ("", [])
    docs = {
        doc_id: Doc(doc_id, corp, title, text)
        for doc_id, corp, title, text in con.execute(
            f"SELECT doc_id, corpus, title, text FROM documents d {where} ORDER BY doc_id", params
        ).fetchall()
    }
    for doc_id in docs:
        if "|" in doc_id:
            raise IngestError("warehouse", doc_id, "doc_id contains '|', which chunk ids use as separator")
    for doc_id, para_idx, s, e in con.execute(
        f"SELECT p.doc_id, p.para_idx, p.char_start, p.char_end FROM paragraphs p JOIN documents d USING (doc_id) "
        f"{where} ORDER BY p.doc_id, p.para_idx",
        params,
    ).fetchall():
        doc = docs[doc_id]
        if para_idx != len(doc.paragraphs):
            raise IngestError(
                "warehouse", doc_id, f"paragraph {para_idx} out of sequence (expected {len(doc.paragraphs)})"
            )
        doc.paragraphs.append((s, e))
    for row in con.execute(
        "SELECT s.structure, s.doc_id, s.section_idx, s.parent_idx, s.level, s.title, s.para_start, s.para_end, "
        f"s.char_start, s.char_end FROM sections s JOIN documents d USING (doc_id) {where} "
        "ORDER BY s.structure, s.doc_id, s.section_idx",
        params,
    ).fetchall():
        docs[row[1]].structures.setdefault(row[0], []).append(SectionRow(*row[2:]))
    for doc in docs.values():
        if not doc.paragraphs:
            raise IngestError("warehouse", doc.doc_id, "document has no paragraphs", "reload its corpus")
        for structure, rows in doc.structures.items():
            problems = verify_sections(rows, doc.paragraphs)
            if problems:
                raise IngestError(
                    "warehouse",
                    f"{doc.doc_id} ({structure})",
                    "loaded structure fails verification: " + "; ".join(problems[:3]),
                    "reload the structure; every structure must pass verify_sections before it is loaded",
                )
    return docs
