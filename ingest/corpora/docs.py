"""Documents read back from the warehouse for the generation stages (induction, A1, queries)."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb

from ingest.errors import IngestError
from ingest.structure.segments import SectionRow


@dataclass
class StoredDoc:
    """One document with its paragraph offsets and (when asked for) one structure's sections."""

    doc_id: str
    corpus: str
    title: str
    text: str
    source_file: str
    paragraphs: list[tuple[int, int]] = field(default_factory=list)
    sections: list[SectionRow] = field(default_factory=list)

    def paragraph_texts(self) -> list[str]:
        """``text[char_start:char_end].strip()`` of every paragraph (the text a model sees)."""
        return [self.text[s:e].strip() for s, e in self.paragraphs]


def structured_corpora(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Corpora with at least one document that has a gold structure (the ones induction applies to)."""
    return [
        r[0]
        for r in con.execute(
            "SELECT DISTINCT d.corpus FROM documents d JOIN sections s ON s.doc_id = d.doc_id AND s.structure = 'gold' "
            "ORDER BY 1"
        ).fetchall()
    ]


def read_docs(con: duckdb.DuckDBPyConnection, corpus: str, structure: str | None = None) -> list[StoredDoc]:
    """Every document of ``corpus`` ordered by ``doc_id``, with paragraphs and, when ``structure`` is
    given, that structure's sections (pre-order). Raises :class:`IngestError` when the corpus is empty."""
    docs = {
        r[0]: StoredDoc(*r)
        for r in con.execute(
            "SELECT doc_id, corpus, title, text, source_file FROM documents WHERE corpus = ? ORDER BY doc_id", [corpus]
        ).fetchall()
    }
    if not docs:
        raise IngestError(
            "warehouse",
            f"corpus {corpus}",
            "no documents loaded",
            f"load it first (ragwh ingest ... --corpus {corpus})",
        )
    for doc_id, s, e in con.execute(
        "SELECT p.doc_id, p.char_start, p.char_end FROM paragraphs p JOIN documents d USING (doc_id) "
        "WHERE d.corpus = ? ORDER BY p.doc_id, p.para_idx",
        [corpus],
    ).fetchall():
        docs[doc_id].paragraphs.append((s, e))
    if structure is not None:
        for row in con.execute(
            "SELECT s.doc_id, s.section_idx, s.parent_idx, s.level, s.title, s.para_start, s.para_end, s.char_start, "
            "s.char_end FROM sections s JOIN documents d USING (doc_id) WHERE d.corpus = ? AND s.structure = ? "
            "ORDER BY s.doc_id, s.section_idx",
            [corpus, structure],
        ).fetchall():
            docs[row[0]].sections.append(SectionRow(*row[1:]))
    return list(docs.values())
