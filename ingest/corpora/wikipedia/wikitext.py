"""Wikitext to prose: the one canonical normalizer for Wikipedia articles, and their gold heading tree.

:func:`parse_article` turns one article's raw wikitext into the flat text of ``design.md``
(``title + "\\n\\n" + "\\n\\n".join(paragraphs)``), the paragraph table recorded *while the text is
emitted*, and the gold section tree built from the wikitext headings with offsets taken from that table.

Normalization (mwparserfromhell, parsed with ``skip_style_tags=True`` so an unbalanced ``''`` can
never swallow the headings that follow it):

* dropped with their content: templates ``{{...}}``, template arguments, comments, ``<ref>...</ref>``
  and self-closing ``<ref/>``, tables (``{| ... |}`` and ``<table>``), ``<gallery>``, ``<math>`` and
  the other non-prose extension tags of :data:`DROPPED_TAGS`, file/image/media links
  (``[[File:...]]``, ``[[Image:...]]``), category links ``[[Category:...]]``, behaviour switches
  (``__NOTOC__``);
* kept as text: wikilinks become their label if piped (``[[a|b]]`` -> ``b``; the pipe trick
  ``[[a (b)|]]`` -> ``a``) else their target (``[[:Category:X]]`` -> ``Category:X``); external links
  become their label (a bare URL stays, an unlabelled ``[http://...]`` is dropped); HTML tags are
  removed and their content kept; HTML entities are decoded; bold/italic quote runs are removed;
  list and definition markers (``*``, ``#``, ``:``, ``;``) are removed and each item stays a text line;
  ``<br>`` becomes a line break;
* whitespace: a source line left empty by dropped markup disappears (it neither joins nor splits
  paragraphs); runs of spaces/tabs/no-break spaces become one space; lines are stripped; a space left
  before ``,`` ``.`` ``;`` by dropped markup is removed, as are brackets emptied by dropped markup
  (``({{birth date|...}})``, ``({{lang|...}}; {{IPA|...}})``); literal ``f()`` or ``a .`` stay.

A paragraph is a block of non-empty lines separated by at least one blank line (its lines are joined
by a single ``"\\n"``); empty paragraphs do not exist by construction.

Headings: wikitext ``==`` is level 1, ``===`` level 2, ``====`` 3, ``=====`` 4 (a rare ``=`` page-level
heading counts as level 1 too); the lead (text before the first heading) is a level-1 section titled
``Introduction``. Levels are made legal by
:func:`ingest.structure.segments.normalize_levels` (a jump nests one level down; anything deeper than 4 is
placed at 4 and counted); headings whose subtree holds no paragraph are dropped by
:func:`ingest.structure.segments.build_sections` and counted; the result goes through
:func:`ingest.structure.segments.verify_sections`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

import mwparserfromhell
from mwparserfromhell.nodes import (
    ExternalLink,
    HTMLEntity,
    Node,
    Tag,
    Text,
    Wikilink,
)
from mwparserfromhell.nodes import (
    Heading as WikiHeading,
)
from mwparserfromhell.wikicode import Wikicode

from ingest.structure.segments import MAX_LEVEL, Heading, SectionRow, build_sections, normalize_levels, verify_sections

LEAD_TITLE = "Introduction"

#: Tags dropped together with everything inside them (non-prose or table content).
DROPPED_TAGS = frozenset(
    {
        "ref",
        "references",
        "table",
        "tr",
        "td",
        "th",
        "caption",
        "gallery",
        "math",
        "chem",
        "ce",
        "hiero",
        "imagemap",
        "timeline",
        "score",
        "graph",
        "templatedata",
        "inputbox",
        "categorytree",
        "section",
        "syntaxhighlight",
        "source",
        "noinclude",
        "includeonly",
        "mapframe",
        "maplink",
        "indicator",
        "charinsert",
    }
)
#: Tags whose content is literal text (quote runs are not markup inside them).
LITERAL_TAGS = frozenset({"nowiki", "pre", "code", "tt"})
#: Link namespaces that embed or categorize instead of linking (dropped).
DROPPED_LINK_NAMESPACES = frozenset({"file", "image", "media", "category"})

# Placeholder for dropped markup: lets a line that held only markup vanish. Private-use code point,
# removed from the input before parsing so it can never come from the source.
_MARK = "\ue000"
# Prefix of a heading found inside other markup (rendered as a paragraph; counted, never a section).
_NESTED_HEADING = "\ue001"
_QUOTE_RUN = re.compile(r"'''''|'''|''")
_BEHAVIOUR_SWITCH = re.compile(r"__[A-Z]+__")
_SPACES = re.compile(r"[^\S\n]+")
# Brackets holding nothing but dropped markup (and separators), and the blanks plus dropped markup
# just before a ``,`` ``.`` ``;``: only where markup was dropped, so literal "f()" or "a ." stay.
_EMPTY_BRACKETS = re.compile(rf"\([\s,;:]*{_MARK}[\s,;:{_MARK}]*\)")
_GAP_BEFORE_PUNCT = re.compile(rf"(?:[^\S\n]|{_MARK})*{_MARK}(?:[^\S\n]|{_MARK})*(?=[,.;])")
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*$")
_WORD = re.compile(r"\S*\w\S*")


@dataclass(frozen=True)
class WikiArticle:
    """One normalized article.

    ``text`` is the flat text; ``paragraphs[i] = (char_start, char_end)`` with
    ``text[char_start:char_end]`` exactly paragraph ``i``; ``sections`` the verified-or-not gold tree
    (``violations`` empty = verified). Counters: ``n_headings`` wikitext headings read (the lead
    excluded), ``nested_headings`` headings found inside other markup (e.g. a ``<div>``: their title
    stays as a paragraph of its own, they open no section), ``dropped_headings`` headings (lead
    included) whose subtree had no paragraph, ``clamped_headings`` headings whose legal nesting depth
    exceeds 4 (placed at level 4),
    ``relevelled_headings`` headings whose level changed to make nesting legal (clamped ones included,
    the others nested one level under a parent they jumped past).
    ``words`` = number of whitespace-separated tokens holding at least one word character in the
    body paragraphs (title excluded).
    """

    title: str
    text: str
    paragraphs: tuple[tuple[int, int], ...]
    sections: tuple[SectionRow, ...]
    violations: tuple[str, ...]
    n_headings: int
    nested_headings: int
    dropped_headings: int
    clamped_headings: int
    relevelled_headings: int
    words: int

    @property
    def depth(self) -> int:
        """Levels in the section tree: the deepest section level (0 without sections)."""
        return max((r.level for r in self.sections), default=0)


def parse(wikitext: str) -> Wikicode:
    """Parse wikitext the one way every function here uses (style tags left as text)."""
    clean = wikitext.replace(_MARK, "").replace(_NESTED_HEADING, "")
    return mwparserfromhell.parse(clean, skip_style_tags=True)


def to_paragraphs(wikitext: str) -> list[str]:
    """Normalized prose paragraphs of a wikitext fragment (no heading handling)."""
    return _paragraphs(_render(parse(wikitext).nodes))


def categories(code: Wikicode) -> list[str]:
    """Category names of ``[[Category:Name|sort key]]`` links anywhere in the page, in order, unique.

    Names have underscores turned into spaces, whitespace collapsed and the first letter upper-cased
    (MediaWiki title rules). A leading colon (``[[:Category:X]]``) is a visible link, not a category.
    """
    seen: dict[str, None] = {}
    for link in code.filter_wikilinks(recursive=True):
        target = str(link.title).strip()
        if ":" not in target or target.startswith(":"):
            continue
        namespace, name = target.split(":", 1)
        if namespace.strip().lower() != "category":
            continue
        name = " ".join(name.replace("_", " ").split())
        if name:
            seen.setdefault(name[0].upper() + name[1:], None)
    return list(seen)


def parse_article(title: str, code: Wikicode) -> WikiArticle:
    """Flat text, paragraph table and verified gold section tree of one parsed article (see module doc)."""
    blocks: list[tuple[int, str, list[str]]] = []  # (raw level, heading title, own paragraphs)
    current: tuple[int, str] = (1, LEAD_TITLE)
    pending: list[Node] = []
    n_headings = nested = 0
    for node in [*code.nodes, None]:
        if node is None or isinstance(node, WikiHeading):
            rendered = _render(pending)
            nested += rendered.count(_NESTED_HEADING)
            blocks.append((*current, _paragraphs(rendered)))
            if node is not None:
                current, pending = (max(node.level - 1, 1), _heading_title(node)), []
                n_headings += 1
        else:
            pending.append(node)

    pieces: list[str] = [title]
    cursor = len(title)
    offsets: list[tuple[int, int]] = []
    for _, _, paras in blocks:
        for para in paras:
            pieces.append("\n\n")
            cursor += 2
            offsets.append((cursor, cursor + len(para)))
            pieces.append(para)
            cursor += len(para)
    text = "".join(pieces)

    raw = [Heading(level, heading_title, len(paras)) for level, heading_title, paras in blocks]
    headings, relevelled = normalize_levels(raw)
    clamped = _count_clamped(raw)
    empty_titles = [i for i, h in enumerate(headings) if not h.title]
    if offsets:
        rows, dropped = build_sections(headings, offsets)
        violations = verify_sections(rows, offsets)
    else:
        rows, dropped, violations = [], list(range(len(headings))), ["document has no paragraphs"]
    violations = [f"heading {i}: empty title after normalization" for i in empty_titles] + violations
    words = sum(len(_WORD.findall(text[s:e])) for s, e in offsets)
    return WikiArticle(
        title,
        text,
        tuple(offsets),
        tuple(rows),
        tuple(violations),
        n_headings,
        nested,
        len(dropped),
        clamped,
        relevelled,
        words,
    )


def _count_clamped(headings: list[Heading]) -> int:
    """Headings whose legal nesting depth (parent's depth + 1, parent = nearest preceding heading
    with a smaller raw level) exceeds :data:`MAX_LEVEL`."""
    stack: list[tuple[int, int]] = []
    clamped = 0
    for h in headings:
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        depth = stack[-1][1] + 1 if stack else 1
        clamped += depth > MAX_LEVEL
        stack.append((h.level, min(depth, MAX_LEVEL)))
    return clamped


def _heading_title(node: WikiHeading) -> str:
    return " ".join(_clean_line(_render(node.title.nodes).replace("\n", " ")).split())


def _render(nodes: Iterable[Node], literal: bool = False) -> str:
    """Visible text of ``nodes`` with :data:`_MARK` wherever markup was dropped."""
    out: list[str] = []
    for node in nodes:
        if isinstance(node, Text):
            value = node.value
            if not literal:
                value = _BEHAVIOUR_SWITCH.sub(_MARK, _QUOTE_RUN.sub(_MARK, value))
            out.append(value)
        elif isinstance(node, Wikilink):
            out.append(_render_wikilink(node))
        elif isinstance(node, ExternalLink):
            if node.title is not None:
                out.append(_render(node.title.nodes))
            elif not node.brackets:
                out.append(str(node.url))
            else:
                out.append(_MARK)
        elif isinstance(node, HTMLEntity):
            out.append(node.normalize())
        elif isinstance(node, Tag):
            out.append(_render_tag(node))
        elif isinstance(node, WikiHeading):  # nested inside markup: its title becomes a counted paragraph
            out.append("\n\n" + _NESTED_HEADING + _render(node.title.nodes) + "\n\n")
        else:  # Template, Argument, Comment
            out.append(_MARK)
    return "".join(out)


def _render_wikilink(node: Wikilink) -> str:
    target = str(node.title).strip()
    visible = target.startswith(":")
    target = target.lstrip(":").strip()
    if not visible and ":" in target and target.split(":", 1)[0].strip().lower() in DROPPED_LINK_NAMESPACES:
        return _MARK
    if node.text is not None:
        label = _render(node.text.nodes)
        if label.strip() or str(node.text).strip():
            return label
        return _PARENTHETICAL.sub("", target.split(":", 1)[-1] if ":" in target else target)  # pipe trick
    return _render(node.title.nodes).strip().lstrip(":")


def _render_tag(node: Tag) -> str:
    name = str(node.tag).strip().lower()
    if node.wiki_markup in ("*", "#", ":", ";", "----") or name in DROPPED_TAGS or name == "hr":
        return _MARK
    if name in ("br", "wbr"):
        return "\n" + _MARK
    if node.self_closing or node.contents is None:
        return _MARK
    return _MARK + _render(node.contents.nodes, literal=name in LITERAL_TAGS) + _MARK


def _clean_line(line: str) -> str:
    line = _GAP_BEFORE_PUNCT.sub("", _EMPTY_BRACKETS.sub(_MARK, line))
    return _SPACES.sub(" ", line.replace(_MARK, "").replace(_NESTED_HEADING, "")).strip()


def _paragraphs(rendered: str) -> list[str]:
    """Split rendered text into paragraphs: markup-only lines vanish, blank lines separate."""
    paragraphs: list[str] = []
    lines: list[str] = []
    for line in rendered.split("\n"):
        clean = _clean_line(line)
        if clean:
            lines.append(clean)
        elif _MARK in line:  # the line held only dropped markup: it vanishes
            continue
        elif lines:
            paragraphs.append("\n".join(lines))
            lines = []
    if lines:
        paragraphs.append("\n".join(lines))
    return paragraphs
