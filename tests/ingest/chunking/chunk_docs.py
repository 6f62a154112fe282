"""Hand-made documents for the chunking tests, written into a warehouse exactly as design.md says
(``documents.text = title + "\\n\\n" + "\\n\\n".join(paragraphs)``, paragraph offsets recorded while
emitting, sections from :func:`ingest.structure.segments.build_sections`)."""

from __future__ import annotations

from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from ingest.structure.segments import Heading, build_sections, verify_sections

WORDS = (
    "model data retrieval chunk section graph neural attention corpus token query answer paper method "
    "result table figure baseline encoder decoder training evaluation score metric language structure"
).split()


def emit(title: str, paragraphs: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Flat text and paragraph offsets, recorded while emitting."""
    text = title
    offsets = []
    for p in paragraphs:
        text += "\n\n"
        offsets.append((len(text), len(text) + len(p)))
        text += p
    return text, offsets


def insert_doc(
    con: duckdb.DuckDBPyConnection,
    doc_id: str,
    title: str,
    sections: Sequence[tuple[int, str, Sequence[str]]],
    corpus: str = "demo",
    extra_structures: dict[str, Sequence[Heading]] | None = None,
) -> str:
    """Insert one document whose gold structure is ``sections`` = ``[(level, heading, paragraphs)]``
    (pre-order) plus optional extra structures (headings over the same paragraphs). Returns the text."""
    paragraphs = [p for _, _, ps in sections for p in ps]
    text, offsets = emit(title, paragraphs)
    con.execute("INSERT INTO documents VALUES (?, ?, ?, ?, NULL, NULL, 'hand-made')", [doc_id, corpus, title, text])
    _insert(con, "paragraphs", [[doc_id, i, s, e] for i, (s, e) in enumerate(offsets)])
    structures = {"gold": [Heading(level, heading, len(ps)) for level, heading, ps in sections]}
    structures.update(extra_structures or {})
    for structure, headings in structures.items():
        rows, dropped = build_sections(headings, offsets)
        assert not dropped and verify_sections(rows, offsets) == []
        _insert(
            con,
            "sections",
            [
                [
                    structure,
                    doc_id,
                    r.section_idx,
                    r.parent_idx,
                    r.level,
                    r.title,
                    r.para_start,
                    r.para_end,
                    r.char_start,
                    r.char_end,
                ]
                for r in rows
            ],
        )
    return text


def _insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[list]) -> None:
    """One INSERT for many rows (executemany is one statement per row)."""
    names = [c[0] for c in con.execute(f"DESCRIBE {table}").fetchall()]
    con.register("_rows", pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)}))
    try:
        con.execute(f"INSERT INTO {table} SELECT * FROM _rows")
    finally:
        con.unregister("_rows")


def random_sentence(rng: np.random.Generator, n_words: int) -> str:
    words = [WORDS[i] for i in rng.integers(len(WORDS), size=n_words)]
    return " ".join(words).capitalize() + "."


def random_paragraph(rng: np.random.Generator, max_sentences: int = 8, max_words: int = 40) -> str:
    n = int(rng.integers(1, max_sentences + 1))
    return " ".join(random_sentence(rng, int(rng.integers(3, max_words))) for _ in range(n))


def random_sections(rng: np.random.Generator, n_sections: int) -> list[tuple[int, str, list[str]]]:
    """A random legal heading tree (levels 1..3, containers allowed) with random paragraphs."""
    out: list[tuple[int, str, list[str]]] = []
    level = 1
    for k in range(n_sections):
        level = 1 if k == 0 else int(rng.integers(1, min(level + 1, 3) + 1))
        out.append((level, f"Heading {k}", []))
    for k, (level, heading, _) in enumerate(out):
        has_child = k + 1 < len(out) and out[k + 1][0] > level
        n_par = int(rng.integers(0 if has_child else 1, 4))
        out[k] = (level, heading, [random_paragraph(rng) for _ in range(n_par)])
    return out


def chunks_of(con: duckdb.DuckDBPyConnection, chunkset: str, doc_id: str) -> list[dict]:
    cur = con.execute("SELECT * FROM chunks WHERE chunkset = ? AND doc_id = ? ORDER BY chunk_idx", [chunkset, doc_id])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]
