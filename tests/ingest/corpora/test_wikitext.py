"""The wikitext normalizer: every markup kind by hand, exact offsets, the gold heading tree, categories."""

from __future__ import annotations

import pytest

from ingest.corpora.wikipedia.wikitext import categories, parse, parse_article, to_paragraphs
from ingest.structure.segments import verify_sections


def article(wikitext: str, title: str = "T"):
    return parse_article(title, parse(wikitext))


# --------------------------------------------------------------------------- markup, one kind at a time


@pytest.mark.parametrize(
    "wikitext, expected",
    [
        # templates: inline, nested, multi-line on their own lines (the lines vanish, no paragraph split)
        ("A {{lang|fr|b}} c.", ["A c."]),
        ("A {{x|{{y|z}}}} c.", ["A c."]),
        ("{{Infobox thing\n| name = X\n| size = {{convert|5|km}}\n}}\nLead text.", ["Lead text."]),
        ("Line one.\n{{Main|Other}}\nline two.", ["Line one.\nline two."]),
        ("{{{1|default}}} kept.", ["kept."]),
        # refs: paired, named self-closing, with markup inside; a space left before '.' is removed
        ('Fact.<ref>Source, p. 3 [http://x.org X]</ref> More <ref name="a" />.', ["Fact. More."]),
        ("Fact<ref name=b>{{cite web|url=http://x}}</ref>, then.", ["Fact, then."]),
        # files and images, captions with nested links included; media links
        ("[[File:A.jpg|thumb|A [[caption]] with ''style'']]\nText.", ["Text."]),
        ("Before [[Image:B.png|left|200px]] after.", ["Before after."]),
        ("See [[Media:C.ogg]] now.", ["See now."]),
        # tables: wiki and HTML
        ('{| class="wikitable"\n|-\n! H1 !! H2\n|-\n| a || b\n|}\nAfter.', ["After."]),
        ("<table><tr><td>cell</td></tr></table>\nAfter.", ["After."]),
        # categories (a leading colon makes a visible link)
        ("Text.\n[[Category:Things|sort key]]\n[[Category:Others]]", ["Text."]),
        ("See [[:Category:Things]].", ["See Category:Things."]),
        # comments, behaviour switches, math, gallery
        ("A <!-- hidden\nmulti-line --> b.", ["A b."]),
        ("__NOTOC__\nText.", ["Text."]),
        ("Area <math>\\pi r^2</math> here.", ["Area here."]),
        ("<gallery>\nFile:A.jpg|a\n</gallery>\nText.", ["Text."]),
        # HTML tags: markup dropped, content kept; <br> breaks the line
        ('A <span style="x">spanned</span> <small>small</small> H<sub>2</sub>O.', ["A spanned small H2O."]),
        ("Line<br>next<br/>last.", ["Line\nnext\nlast."]),
        ("<blockquote>Quoted words.</blockquote>", ["Quoted words."]),
        # wikilinks: target, label, pipe trick, link trail, visible interwiki
        ("A [[political philosophy]] b.", ["A political philosophy b."]),
        ("A [[self-governance|self-governed]] b.", ["A self-governed b."]),
        ("A [[Paris (France)|]] b.", ["A Paris b."]),
        ("Two [[dog]]s.", ["Two dogs."]),
        ("A [[wikt:word|word]] b.", ["A word b."]),
        # external links: label kept, unlabelled bracketed dropped, bare URL kept
        ("See [http://example.org the site] now.", ["See the site now."]),
        ("See [http://example.org] now.", ["See now."]),
        ("At http://example.org today.", ["At http://example.org today."]),
        # bold and italic removed (quote runs of 2, 3, 5)
        ("'''Bold''' and ''italic'' and '''''both''''' and it's.", ["Bold and italic and both and it's."]),
        # lists: markers removed, items stay text lines of one paragraph
        (
            "Intro:\n* one\n* two ''x''\n# three\n: indented\n; term : definition",
            ["Intro:\none\ntwo x\nthree\nindented\nterm definition"],
        ),
        # entities
        ("A&nbsp;b &amp; c &mdash; d.", ["A b & c \u2014 d."]),
        # whitespace: runs collapse, blank lines split paragraphs, several blank lines = one break
        ("  A   b\t c.  \n\n\n\nNext   para.\n  \n", ["A b c.", "Next para."]),
        # brackets emptied by dropped markup go away
        ("Born ({{birth date|1900|1|1}}) in X.", ["Born in X."]),
        ("Word ({{lang|grc|x}}; {{IPA|y}}) end.", ["Word end."]),
        # ... but brackets and spaces that were in the source stay
        ("Call <code>f()</code> or g( ) , then x .", ["Call f() or g( ) , then x ."]),
        ("A {{x}} , b {{y}}; c ({{z}}) ( ).", ["A, b; c ( )."]),
        # nowiki and code content stays literal
        ("Use <nowiki>''not italic''</nowiki> here.", ["Use ''not italic'' here."]),
    ],
)
def test_markup_kinds(wikitext: str, expected: list[str]) -> None:
    assert to_paragraphs(wikitext) == expected


def test_markup_only_lines_neither_join_nor_split_paragraphs() -> None:
    text = "P1 line.\n[[File:x.jpg]]\n{{clear}}\nP1 cont.\n\n<!-- c -->\n\nP2.\n{{reflist}}"
    assert to_paragraphs(text) == ["P1 line.\nP1 cont.", "P2."]


def test_unbalanced_italic_does_not_swallow_headings() -> None:
    a = article("Lead with ''open italic.\n== First ==\nOne.\n== Second ==\nTwo.")
    assert [r.title for r in a.sections] == ["Introduction", "First", "Second"]
    assert a.text == "T\n\nLead with open italic.\n\nOne.\n\nTwo."


def test_empty_input_has_no_paragraphs() -> None:
    assert to_paragraphs("") == []
    assert to_paragraphs("{{only a template}}\n[[Category:X]]") == []


# --------------------------------------------------------------------------- flat text and offsets


WIKI = """{{Infobox|a=b}}
'''Topic''' is a [[thing]].<ref>r</ref>

Second lead paragraph.

== History ==
Old times.

=== Early ===
Early one.

Early two.

==== Very early ====
Ancient.

===== Deepest =====
Bottom.

=== Late ===
{{Main|Late}}
Late text.

== Empty ==
{{reflist}}

== See also ==
* [[Other thing]]
* [[Third|3rd thing]]

[[Category:Things]]
"""

PARAS = [
    "Topic is a thing.",
    "Second lead paragraph.",
    "Old times.",
    "Early one.",
    "Early two.",
    "Ancient.",
    "Bottom.",
    "Late text.",
    "Other thing\n3rd thing",
]


def test_flat_text_and_offsets_exact() -> None:
    a = article(WIKI, title="Topic")
    assert a.text == "Topic\n\n" + "\n\n".join(PARAS)
    assert [a.text[s:e] for s, e in a.paragraphs] == PARAS
    # contiguous: each paragraph starts 2 characters ("\n\n") after the previous one ends
    assert a.paragraphs[0][0] == len("Topic") + 2
    assert all(b[0] == prev[1] + 2 for prev, b in zip(a.paragraphs, a.paragraphs[1:]))
    assert a.paragraphs[-1][1] == len(a.text)
    assert a.words == sum(len(p.split()) for p in PARAS)


def test_heading_levels_nesting_and_spans() -> None:
    a = article(WIKI, title="Topic")
    got = [(r.section_idx, r.parent_idx, r.level, r.title, r.para_start, r.para_end) for r in a.sections]
    assert got == [
        (0, None, 1, "Introduction", 0, 1),
        (1, None, 1, "History", 2, 7),
        (2, 1, 2, "Early", 3, 6),
        (3, 2, 3, "Very early", 5, 6),
        (4, 3, 4, "Deepest", 6, 6),
        (5, 1, 2, "Late", 7, 7),
        (6, None, 1, "See also", 8, 8),
    ]
    for r in a.sections:
        assert (r.char_start, r.char_end) == (a.paragraphs[r.para_start][0], a.paragraphs[r.para_end][1])
    assert a.violations == () and verify_sections(list(a.sections), list(a.paragraphs)) == []
    assert (a.n_headings, a.dropped_headings, a.clamped_headings, a.relevelled_headings) == (7, 1, 0, 0)
    assert a.depth == 4


def test_deeper_than_four_is_clamped_and_counted() -> None:
    a = article("Lead.\n== A ==\na\n=== B ===\nb\n==== C ====\nc\n===== D =====\nd\n====== E ======\ne\n== F ==\nf")
    assert [(r.title, r.level, r.parent_idx) for r in a.sections] == [
        ("Introduction", 1, None),
        ("A", 1, None),
        ("B", 2, 1),
        ("C", 3, 2),
        ("D", 4, 3),
        ("E", 4, 3),
        ("F", 1, None),
    ]
    assert (a.clamped_headings, a.relevelled_headings) == (1, 1)
    assert a.violations == ()


def test_level_jump_nests_one_level_down() -> None:
    a = article("Lead.\n== A ==\na\n==== Jumped ====\nj\n==== Sibling ====\ns\n=== Normal ===\nn")
    assert [(r.title, r.level, r.parent_idx) for r in a.sections] == [
        ("Introduction", 1, None),
        ("A", 1, None),
        ("Jumped", 2, 1),
        ("Sibling", 2, 1),
        ("Normal", 2, 1),
    ]
    assert (a.clamped_headings, a.relevelled_headings) == (0, 2)


def test_container_heading_and_empty_lead() -> None:
    a = article("{{Infobox}}\n== Parent ==\n=== Child ===\nc1\n\nc2\n=== Child 2 ===\nd")
    assert [(r.title, r.level, r.para_start, r.para_end) for r in a.sections] == [
        ("Parent", 1, 0, 2),
        ("Child", 2, 0, 1),
        ("Child 2", 2, 2, 2),
    ]
    assert a.dropped_headings == 1  # the empty lead
    assert a.violations == ()


def test_heading_inside_markup_is_text_and_counted() -> None:
    a = article("Lead.\n<div>\n== Inner ==\nInside.\n</div>\n== Outer ==\nAfter.")
    assert [r.title for r in a.sections] == ["Introduction", "Outer"]
    assert a.text == "T\n\nLead.\n\nInner\n\nInside.\n\nAfter."
    assert (a.n_headings, a.nested_headings) == (1, 1)


def test_heading_title_is_normalized() -> None:
    a = article("x\n== ''The'' [[Thing|thing]]<ref>r</ref>  {{anchor|t}} ==\ny")
    assert a.sections[1].title == "The thing"


def test_empty_heading_title_is_a_violation() -> None:
    a = article("x\n== {{anchor|only}} ==\ny")
    assert any("empty title" in v for v in a.violations)


def test_article_without_paragraphs_is_a_violation() -> None:
    a = article("{{Infobox}}\n== A ==\n{{reflist}}\n[[Category:X]]")
    assert a.paragraphs == () and a.sections == ()
    assert a.violations == ("document has no paragraphs",)


# --------------------------------------------------------------------------- categories


def test_categories_extraction() -> None:
    code = parse(
        "x [[Category:Foo bar|sort]] [[category: baz_qux]] [[:Category:Visible]] [[Category:Foo bar]]\n"
        "[[File:x.jpg|[[Category:Inside caption]]]]"
    )
    assert categories(code) == ["Foo bar", "Baz qux", "Inside caption"]
