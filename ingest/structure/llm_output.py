"""Reading a model's structure answer, checking it, and snapping near-valid answers to a legal tiling.

The expected answer is ``{"sections": [{"title", "level", "first_paragraph", "last_paragraph"}]}``
with 1-based inclusive paragraph numbers (see ``prompts/induce_structure.v1.txt``). Prose or code
fences around the JSON are tolerated: the first JSON object in the text that has a ``sections`` key
is used. Integral numbers written as floats or digit strings are accepted as integers. An answer
whose JSON never closes (typically cut at max_tokens) keeps the complete entries of its
``"sections": [`` list, with a problem saying so (the correct -> repair path takes it from there).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

from ingest.structure.segments import MAX_LEVEL, Heading, SectionRow, build_sections, flat_violations, verify_sections

_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class RawSection:
    """One entry of a model answer; a field the model got wrong (missing, not an integer) is None."""

    title: str
    level: int | None
    first: int | None
    last: int | None


@dataclass(frozen=True)
class Parsed:
    """``sections`` is None when no usable JSON object was found; ``problems`` lists schema errors;
    ``obj`` is the complete JSON object read (None when there is none, e.g. a cut answer)."""

    sections: list[RawSection] | None
    problems: list[str]
    obj: Any = None


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _find_object(text: str) -> dict | None:
    decoder = json.JSONDecoder()
    pos = text.find("{")
    while pos != -1:
        try:
            obj, _ = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and "sections" in obj:
            return obj
        pos = text.find("{", pos + 1)
    return None


def _open_list(text: str) -> list | None:
    """The complete objects of a ``"sections": [`` list that never closes (None when there is none)."""
    found = re.search(r'"sections"\s*:\s*\[', text)
    if found is None:
        return None
    decoder, pos, items = json.JSONDecoder(), found.end(), []
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        try:
            item, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return items or None
        items.append(item)


def parse_answer(text: str) -> Parsed:
    """Extract the section list from a model answer, collecting every schema problem."""
    obj = _find_object(text)
    cut: list[str] = []
    if obj is None:
        items = _open_list(text)
        if items is None:
            return Parsed(None, ['no JSON object with a "sections" key found in the answer'])
        obj = {"sections": items}
        cut = [f"the answer's JSON never closes (cut off?): {len(items)} complete section(s) read"]
    items = obj["sections"]
    if not isinstance(items, list):
        return Parsed(None, [f'"sections" is a {type(items).__name__}, not a list'], None if cut else obj)
    problems: list[str] = []
    sections: list[RawSection] = []
    for k, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            problems.append(f"section {k}: not an object")
            sections.append(RawSection("", None, None, None))
            continue
        title = item.get("title")
        if not isinstance(title, str) or not title.strip():
            problems.append(f"section {k}: missing or empty title")
            title = ""
        values = {}
        for key in ("level", "first_paragraph", "last_paragraph"):
            values[key] = _as_int(item.get(key))
            if values[key] is None:
                problems.append(f"section {k}: {key} missing or not an integer ({item.get(key)!r})")
        sections.append(
            RawSection(
                _WS.sub(" ", title).strip(), values["level"], values["first_paragraph"], values["last_paragraph"]
            )
        )
    return Parsed(sections, cut + problems, None if cut else obj)


def schema_valid(parsed: Parsed, schema: dict) -> bool:
    """Whether the answer's JSON object (the one :func:`parse_answer` read; prose or code fences around
    it are tolerated, a cut answer has none) satisfies ``schema``."""
    import jsonschema

    return parsed.obj is not None and jsonschema.Draft202012Validator(schema).is_valid(parsed.obj)


def answer_violations(parsed: Parsed, n_paragraphs: int) -> list[str]:
    """Everything wrong with an answer: schema problems, then tiling/level/bound violations
    (:func:`ingest.structure.segments.flat_violations`) when every entry has its numbers."""
    problems = list(parsed.problems)
    if parsed.sections is None:
        return problems
    if all(s.level is not None and s.first is not None and s.last is not None for s in parsed.sections):
        problems += flat_violations([(s.level, s.first, s.last) for s in parsed.sections], n_paragraphs)
    elif not parsed.sections:
        problems += flat_violations([], n_paragraphs)
    return problems


def to_headings(sections: Sequence[RawSection]) -> list[Heading]:
    """Headings of an answer that has no violations (each section owns ``last - first + 1`` paragraphs)."""
    return [Heading(s.level, s.title, s.last - s.first + 1) for s in sections]


def repair(sections: Sequence[RawSection], n_paragraphs: int) -> tuple[list[Heading], list[str]]:
    """Deterministically snap an answer to a legal tiling of paragraphs ``1..n_paragraphs``.

    Steps, each recorded in the returned action list when it changes something:
    1. drop entries without both paragraph numbers; swap reversed ranges; clamp to ``1..n``;
    2. order entries by first paragraph (stable);
    3. resolve overlaps: an entry starts after everything before it ends, and ends just before the
       next entry's declared start when that start falls inside it (a parent given with its whole
       subtree span keeps only its intro); an entry left with no paragraph becomes a container when
       the next entry is deeper, else it is dropped;
    4. close gaps: the first owner starts at 1, an uncovered run goes to the section before it, the
       last owner ends at ``n``;
    5. levels: a missing level takes the previous one; the first is 1; a level rises by at most one
       and stays within ``1..MAX_LEVEL``;
    6. empty titles become ``Section <k>``.
    Returns ``([], actions)`` when nothing is left to repair.
    """
    actions: list[str] = []
    entries: list[list] = []  # [title, level, first, last]
    for k, s in enumerate(sections, start=1):
        if s.first is None or s.last is None:
            actions.append(f"dropped section {k}: no paragraph range")
            continue
        first, last = s.first, s.last
        if first > last:
            first, last = last, first
            actions.append(f"section {k}: swapped reversed range {s.first}..{s.last}")
        cf, cl = min(max(first, 1), n_paragraphs), min(max(last, 1), n_paragraphs)
        if (cf, cl) != (first, last):
            actions.append(f"section {k}: clamped {first}..{last} to {cf}..{cl}")
        if not s.title:
            actions.append(f"section {k}: empty title set to 'Section {k}'")
        entries.append([s.title or f"Section {k}", s.level, cf, cl, k])
    if not entries:
        return [], actions + ["nothing left to repair"]

    order = sorted(range(len(entries)), key=lambda i: entries[i][2])
    if order != list(range(len(entries))):
        actions.append("reordered sections by first paragraph")
    entries = [entries[i] for i in order]

    # 5 first for missing levels, so container decisions in step 3 see real levels
    previous = 1
    for e in entries:
        if e[1] is None:
            e[1] = previous
            actions.append(f"section {e[4]}: missing level set to {previous}")
        previous = e[1]

    owned: list[list] = []  # [title, level, start, end, k] with end < start meaning container
    prev_end = 0
    for i, (title, level, first, last, k) in enumerate(entries):
        start, end = max(first, prev_end + 1), last
        if i + 1 < len(entries):
            nxt = entries[i + 1][2]
            if start - 1 < nxt <= end:
                end = nxt - 1
        if (start, end) != (first, last):
            actions.append(
                f"section {k}: overlap resolved, {first}..{last} -> "
                + (f"{start}..{end}" if end >= start else "no own paragraphs")
            )
        if end < start:
            deeper_next = i + 1 < len(entries) and (entries[i + 1][1] or 0) > (level or 0)
            if not deeper_next:
                actions.append(f"dropped section {k}: covers no paragraph")
                continue
            owned.append([title, level, start, start - 1, k])
            continue
        owned.append([title, level, start, end, k])
        prev_end = end

    owners = [e for e in owned if e[3] >= e[2]]
    if not owners:
        return [], actions + ["nothing left to repair"]
    if owners[0][2] != 1:
        actions.append(f"gap closed: section {owners[0][4]} extended to start at paragraph 1")
        owners[0][2] = 1
    for a, b in zip(owners, owners[1:]):
        if b[2] > a[3] + 1:
            actions.append(f"gap closed: paragraphs {a[3] + 1}..{b[2] - 1} given to section {a[4]}")
            a[3] = b[2] - 1
    if owners[-1][3] != n_paragraphs:
        actions.append(f"gap closed: section {owners[-1][4]} extended to end at paragraph {n_paragraphs}")
        owners[-1][3] = n_paragraphs

    headings: list[Heading] = []
    previous_level = 0
    for e in owned:
        title, level, start, end, k = e
        legal = max(1, min(level, previous_level + 1, MAX_LEVEL))
        if legal != level:
            actions.append(f"section {k}: level {level} -> {legal}")
        previous_level = legal
        headings.append(Heading(legal, title, max(end - start + 1, 0)))
    return headings, actions


def rows_for(
    headings: Sequence[Heading], para_offsets: Sequence[tuple[int, int]]
) -> tuple[list[SectionRow], list[str], int]:
    """Section rows of ``headings``, their :func:`verify_sections` violations, and how many headings
    ``build_sections`` dropped because their whole subtree holds no paragraph."""
    rows, dropped = build_sections(headings, para_offsets)
    return rows, verify_sections(rows, para_offsets), len(dropped)
