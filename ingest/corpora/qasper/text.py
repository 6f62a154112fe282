"""A QASPER paper's flat text, paragraph offsets and gold heading list (the one canonical builder).

``text = title + "\\n\\n" + "\\n\\n".join(body paragraphs)`` (docs/design.md). The body is the
abstract -- its own level-1 section titled ``Abstract`` -- then every ``full_text`` entry's
paragraphs in source order. Each paragraph's ``[char_start, char_end)`` (Python ``str`` indices =
Unicode code points, as DuckDB's ``substring``) is recorded while it is appended, never searched.

Normalization (documented, deterministic):

* the title has its whitespace runs collapsed to one space and is stripped;
* every paragraph is stripped of outer whitespace (inner text untouched); a paragraph that is empty
  after stripping is skipped and counted (``empty``);
* the abstract is split into paragraphs at blank lines (``\\n`` + optional whitespace + ``\\n``);
  QASPER abstracts are one paragraph, so this is normally one paragraph.

Gold headings come from ``section_name``: ``"A ::: B ::: C"`` is heading C (level 3) under B under
A. Consecutive entries share the longest common prefix of ancestor names with the open path; an
ancestor missing from the open path (it appears only as a prefix) becomes a *container* heading
owning no paragraphs. Names deeper than :data:`MAX_LEVEL` keep their first three parts and join
the rest with ``" ::: "`` into the level-4 title (counted ``depth_clamped``). A ``null`` name or a
blank name part becomes the title :data:`UNTITLED` (counted ``null_section_name`` /
``empty_section_name``; the entry and its paragraphs are kept).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ingest.corpora.qasper.records import Paper
from ingest.structure.segments import MAX_LEVEL, Heading

SEPARATOR = "\n\n"
NEST = " ::: "
UNTITLED = "(untitled)"
ABSTRACT = "Abstract"
_BLANK_LINE = re.compile(r"\n\s*\n")


@dataclass
class NameCounts:
    """Per-paper counts of what the builder repaired or skipped (summed into the funnel)."""

    entries: int = 0  # full_text entries read
    null_section_name: int = 0  # section_name is null
    empty_section_name: int = 0  # section_name is blank or has a blank ' ::: ' part
    depth_clamped: int = 0  # section_name nested deeper than MAX_LEVEL
    paragraphs_input: int = 0  # source paragraphs, abstract paragraphs included
    empty_paragraphs: int = 0  # skipped: empty after stripping


@dataclass
class FlatPaper:
    """The flat text and everything recorded while emitting it.

    ``paths[i]`` is the full ``" ::: "`` path of ``headings[i]`` (as written in ``section_name``
    after repair), used to attribute evidence that names a section.
    """

    title: str
    text: str
    para_offsets: list[tuple[int, int]]
    headings: list[Heading]
    paths: list[str]
    counts: NameCounts = field(default_factory=NameCounts)


def heading_parts(name: str | None, counts: NameCounts) -> list[str]:
    """The repaired, clamped heading path of one ``section_name`` (see the module docstring)."""
    counts.entries += 1
    if name is None:
        counts.null_section_name += 1
        return [UNTITLED]
    parts = [p.strip() for p in name.split(NEST)]
    if any(not p for p in parts):
        counts.empty_section_name += 1
        parts = [p or UNTITLED for p in parts]
    if len(parts) > MAX_LEVEL:
        counts.depth_clamped += 1
        parts = parts[: MAX_LEVEL - 1] + [NEST.join(parts[MAX_LEVEL - 1 :])]
    return parts


def flatten_paper(paper: Paper) -> FlatPaper:
    """Build the flat text, the paragraph offsets and the pre-order gold heading list of ``paper``.

    Offsets: paragraph ``k`` starts at ``len(title) + sum_{j<k}(2 + len(p_j)) + 2`` and ends at
    ``char_start + len(p_k)``; both are taken from the running length while appending.
    """
    counts = NameCounts()
    title = " ".join(paper.title.split())
    pieces: list[str] = [title]
    cursor = len(title)
    offsets: list[tuple[int, int]] = []

    def emit(paragraphs: list[str]) -> int:
        nonlocal cursor
        kept = 0
        for raw in paragraphs:
            counts.paragraphs_input += 1
            para = raw.strip()
            if not para:
                counts.empty_paragraphs += 1
                continue
            pieces.append(SEPARATOR)
            pieces.append(para)
            start = cursor + len(SEPARATOR)
            cursor = start + len(para)
            offsets.append((start, cursor))
            kept += 1
        return kept

    headings = [Heading(1, ABSTRACT, emit(_BLANK_LINE.split(paper.abstract)))]
    paths = [ABSTRACT]
    open_path: list[str] = []
    for name, paragraphs in paper.sections:
        parts = heading_parts(name, counts)
        common = 0
        while common < min(len(open_path), len(parts) - 1) and open_path[common] == parts[common]:
            common += 1
        for depth in range(common, len(parts) - 1):  # ancestors named only as a prefix
            headings.append(Heading(depth + 1, parts[depth], 0))
            paths.append(NEST.join(parts[: depth + 1]))
        headings.append(Heading(len(parts), parts[-1], emit(list(paragraphs))))
        paths.append(NEST.join(parts))
        open_path = parts
    text = "".join(pieces)
    assert len(text) == cursor, "flat text length disagrees with the emitted offsets"
    return FlatPaper(title, text, offsets, headings, paths, counts)
