"""Heading trees over a document's paragraphs: building them and verifying them.

A structure is a pre-order list of sections. Section ``i`` covers the *subtree span*
``para_start..para_end`` (inclusive paragraph indices, own paragraphs then all descendants'), and
``[char_start, char_end)`` with ``char_start = paragraphs[para_start].char_start`` and
``char_end = paragraphs[para_end].char_end``. A heading owns the paragraphs that follow it up to its
first child; a heading that owns none (a container) starts where its first child starts.

:func:`verify_sections` is the one verification every structure passes (gold or induced) before it is
loaded; an empty list means verified. :func:`flat_violations` checks flat model output
(``(level, first, last)`` with 1-based inclusive paragraph numbers) before it is turned into a tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

MAX_LEVEL = 4

ParaOffsets = Sequence[tuple[int, int]]


@dataclass(frozen=True)
class Heading:
    """One heading of a pre-order flat list; it owns the next ``n_paragraphs`` paragraphs."""

    level: int
    title: str
    n_paragraphs: int


@dataclass(frozen=True)
class SectionRow:
    """One row of the ``sections`` table (without ``structure`` and ``doc_id``)."""

    section_idx: int
    parent_idx: int | None
    level: int
    title: str
    para_start: int
    para_end: int
    char_start: int
    char_end: int


def normalize_levels(headings: Sequence[Heading]) -> tuple[list[Heading], int]:
    """Make nesting legal: a heading's level becomes its parent's level + 1, capped at ``MAX_LEVEL``.

    The parent of a heading is the nearest preceding heading with a smaller *raw* level, so a jump
    (``==`` straight to ``====``) nests one level down and its siblings stay siblings. A heading that
    would exceed ``MAX_LEVEL`` is placed at ``MAX_LEVEL`` (a sibling of its parent). Returns the new
    list and how many headings changed level.
    """
    out: list[Heading] = []
    stack: list[tuple[int, int]] = []  # (raw level, effective level) of the open ancestors
    changed = 0
    for h in headings:
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        effective = min(stack[-1][1] + 1 if stack else 1, MAX_LEVEL)
        stack.append((h.level, effective))
        if effective != h.level:
            changed += 1
        out.append(Heading(effective, h.title, h.n_paragraphs))
    return out, changed


def build_sections(headings: Sequence[Heading], para_offsets: ParaOffsets) -> tuple[list[SectionRow], list[int]]:
    """Turn a pre-order heading list into section rows with subtree spans and char offsets.

    Heading ``i`` owns paragraphs ``[c_i, c_i + n_i)`` where ``c_i`` is the running total of the
    ``n_paragraphs`` before it. Its subtree ends just before the next heading of the same or a
    smaller level starts. Headings whose whole subtree holds no paragraph are dropped; their indices
    (into ``headings``) are returned so the caller can count them. Levels are used as given (see
    :func:`normalize_levels`); :func:`verify_sections` reports anything illegal.
    """
    starts: list[int] = []
    cursor = 0
    for h in headings:
        if h.n_paragraphs < 0:
            raise ValueError(f"heading {h.title!r} owns a negative number of paragraphs")
        starts.append(cursor)
        cursor += h.n_paragraphs
    if cursor != len(para_offsets):
        raise ValueError(f"headings own {cursor} paragraphs but the document has {len(para_offsets)}")

    ends: list[int] = [0] * len(headings)
    open_: list[int] = []  # indices whose subtree is still open
    for i, h in enumerate(headings):
        while open_ and headings[open_[-1]].level >= h.level:
            ends[open_.pop()] = starts[i]
        open_.append(i)
    for i in open_:
        ends[i] = cursor

    rows: list[SectionRow] = []
    dropped: list[int] = []
    new_index: dict[int, int] = {}
    ancestors: list[int] = []  # kept heading indices on the current path
    for i, h in enumerate(headings):
        if ends[i] <= starts[i]:
            dropped.append(i)
            continue
        while ancestors and headings[ancestors[-1]].level >= h.level:
            ancestors.pop()
        parent = new_index[ancestors[-1]] if ancestors else None
        new_index[i] = len(rows)
        first, last = starts[i], ends[i] - 1
        rows.append(
            SectionRow(
                section_idx=len(rows),
                parent_idx=parent,
                level=h.level,
                title=h.title,
                para_start=first,
                para_end=last,
                char_start=para_offsets[first][0],
                char_end=para_offsets[last][1],
            )
        )
        ancestors.append(i)
    return rows, dropped


def verify_sections(rows: Sequence[SectionRow], para_offsets: ParaOffsets) -> list[str]:
    """Every way ``rows`` fails to be a legal heading tree over the paragraphs ([] = verified).

    Checks: paragraphs ordered and non-overlapping; rows numbered 0..n-1 in order; ``1 <= level <=
    MAX_LEVEL``, the first section at level 1, no level rising by more than one; ``parent_idx`` is the
    nearest preceding section one level up (NULL at level 1); paragraph ranges in bounds; level-1
    sections tile all paragraphs (start at 0, each starts where the previous ended, the last ends at
    the last paragraph); the children of each section tile a suffix of it; char offsets agree with
    the paragraph table exactly.
    """
    problems: list[str] = []
    n = len(para_offsets)
    if n == 0:
        return ["document has no paragraphs"]
    if not rows:
        return ["structure has no sections"]
    for p in range(n):
        s, e = para_offsets[p]
        if not 0 <= s < e:
            problems.append(f"paragraph {p}: empty or negative range [{s}, {e})")
        if p and para_offsets[p - 1][1] > s:
            problems.append(f"paragraph {p}: starts at {s}, before paragraph {p - 1} ends")

    last_at_level: dict[int, int] = {}
    for pos, r in enumerate(rows):
        name = f"section {pos} ({r.title!r})"
        if r.section_idx != pos:
            problems.append(f"{name}: section_idx {r.section_idx} out of order")
        if not 1 <= r.level <= MAX_LEVEL:
            problems.append(f"{name}: level {r.level} outside 1..{MAX_LEVEL}")
        if pos == 0 and r.level != 1:
            problems.append(f"{name}: first section has level {r.level}, not 1")
        if pos and r.level > rows[pos - 1].level + 1:
            problems.append(f"{name}: level jumps from {rows[pos - 1].level} to {r.level}")
        expected_parent = last_at_level.get(r.level - 1) if r.level > 1 else None
        if r.parent_idx != expected_parent:
            problems.append(f"{name}: parent_idx {r.parent_idx}, expected {expected_parent}")
        last_at_level[r.level] = pos
        for deeper in [lvl for lvl in last_at_level if lvl > r.level]:
            del last_at_level[deeper]
        if not 0 <= r.para_start <= r.para_end < n:
            problems.append(f"{name}: paragraph range {r.para_start}..{r.para_end} out of bounds 0..{n - 1}")
            continue
        if (r.char_start, r.char_end) != (para_offsets[r.para_start][0], para_offsets[r.para_end][1]):
            problems.append(f"{name}: char offsets disagree with paragraph table")

    def tile(children: list[int], first: int, last: int, what: str, exact_start: bool) -> None:
        if not children:
            return
        head = rows[children[0]]
        if exact_start and head.para_start != first:
            problems.append(f"{what}: first section starts at paragraph {head.para_start}, not {first}")
        if not exact_start and head.para_start < first:
            problems.append(f"{what}: child starts at paragraph {head.para_start}, before its parent ({first})")
        for a, b in zip(children, children[1:]):
            ra, rb = rows[a], rows[b]
            if rb.para_start > ra.para_end + 1:
                problems.append(
                    f"gap between section {a} and {b}: paragraphs {ra.para_end + 1}..{rb.para_start - 1} uncovered"
                )
            elif rb.para_start <= ra.para_end:
                problems.append(f"overlap between section {a} and {b}: paragraphs {rb.para_start}..{ra.para_end}")
        tail = rows[children[-1]]
        if tail.para_end != last:
            problems.append(f"{what}: last section ends at paragraph {tail.para_end}, not {last}")

    tile([i for i, r in enumerate(rows) if r.level == 1], 0, n - 1, "top level", exact_start=True)
    for pos, r in enumerate(rows):
        kids = [i for i, c in enumerate(rows) if c.parent_idx == pos]
        tile(kids, r.para_start, r.para_end, f"children of section {pos}", exact_start=False)
    return problems


def flat_violations(entries: Sequence[tuple[int, int, int]], n_paragraphs: int) -> list[str]:
    """Violations of flat model output: ``(level, first, last)``, 1-based inclusive paragraph numbers.

    The entries must tile paragraphs ``1..n_paragraphs`` in order (first at 1, each starting right
    after the previous one's last, the last ending at ``n_paragraphs``), every range in bounds and
    non-empty, levels starting at 1, rising by at most one, and at most ``MAX_LEVEL``.
    """
    if not entries:
        return ["no sections returned"]
    problems: list[str] = []
    expected = 1
    previous_level = 0
    for k, (level, first, last) in enumerate(entries, start=1):
        name = f"section {k}"
        if not 1 <= first <= last <= n_paragraphs:
            problems.append(
                f"{name}: paragraphs {first}..{last} invalid (must satisfy 1 <= first <= last <= {n_paragraphs})"
            )
        if first > expected:
            problems.append(f"{name}: gap, paragraphs {expected}..{first - 1} belong to no section")
        elif first < expected:
            problems.append(
                f"{name}: overlap, paragraphs {first}..{expected - 1} already belong to the previous section"
            )
        if k == 1 and level != 1:
            problems.append(f"{name}: first section has level {level}, must be 1")
        if level < 1 or level > MAX_LEVEL:
            problems.append(f"{name}: level {level} outside 1..{MAX_LEVEL}")
        elif level > previous_level + 1:
            problems.append(f"{name}: level jumps from {previous_level} to {level} (may rise by at most one)")
        previous_level = level
        expected = max(expected, last + 1)
    if expected <= n_paragraphs:
        problems.append(f"paragraphs {expected}..{n_paragraphs} after the last section belong to no section")
    return problems


def flat_to_headings(entries: Sequence[tuple[int, int, int, str]]) -> list[Heading]:
    """Flat ``(level, first, last, title)`` entries that passed :func:`flat_violations` as headings."""
    return [Heading(level, title, last - first + 1) for level, first, last, title in entries]
