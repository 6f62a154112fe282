"""Hand-made Wikipedia pages for the ingestion tests, written as a MediaWiki XML export and as JSONL.

Each page is a plain dict (``page_id``, ``title``, ``ns``, ``redirect``, ``wikitext``); the two
writers render the same pages, so the XML and JSONL files hold the same articles.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence
from xml.sax.saxutils import escape

VOCAB = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron sigma tau upsilon".split()


def prose(n_words: int, seed: int = 0) -> str:
    """A sentence-like paragraph of exactly ``n_words`` words (with wiki markup that normalizes away)."""
    words = [VOCAB[(seed + i) % len(VOCAB)] for i in range(n_words)]
    words[0] = f"'''{words[0]}'''"
    words[-1] = words[-1] + ".<ref>a source</ref>"
    return " ".join(words)


def page(
    page_id: int,
    title: str,
    outline: Sequence[tuple[int, str]],
    words_per_para: int,
    cats: Sequence[str] = (),
    lead: bool = True,
) -> dict:
    """An article: ``outline`` lists ``(wikitext level, heading)``; every heading and the lead own one
    paragraph of ``words_per_para`` words."""
    parts = ["{{Infobox thing|name=x}}"]
    if lead:
        parts.append(prose(words_per_para, page_id))
    for k, (level, heading) in enumerate(outline):
        parts.append(f"{'=' * level} {heading} {'=' * level}\n{prose(words_per_para, page_id + k)}")
    parts.append("== References ==\n{{reflist}}")
    parts.extend(f"[[Category:{c}]]" for c in cats)
    return {"page_id": page_id, "title": title, "ns": 0, "redirect": False, "wikitext": "\n\n".join(parts)}


def outline(top: int, depth: int) -> list[tuple[int, str]]:
    """``top`` level-1 sections; the first holds a chain reaching ``depth`` levels, the others two children
    each when ``depth >= 2``. Sections: ``top + (depth - 1) + 2 * (top - 1) * (depth >= 2)``."""
    out: list[tuple[int, str]] = []
    for t in range(top):
        out.append((2, f"Part {t}"))
        if t == 0:
            out.extend((2 + d, f"Part {t} level {d + 1}") for d in range(1, depth))
        elif depth >= 2:
            out.extend([(3, f"Part {t} a"), (3, f"Part {t} b")])
    return out


def sample_pages() -> list[dict]:
    """Pages covering each filter outcome, a redirect, a talk page and an empty article.

    With defaults (3,000 words, depth 3, 12 sections): 10, 17 and 18 pass; 11 fails on words, 12 on
    depth, 13 on sections, 14 on all three (counted as words); 15 is a redirect, 16 a talk page, 19 empty.
    """
    deep = outline(5, 3)  # 5 + 2 + 8 = 15 sections + Introduction = 16
    return [
        page(10, "Deep Article", deep, 250, ["1900 births", "Living people"]),
        page(11, "Short Article", deep, 50, ["Wars of the world"]),
        page(12, "Shallow Article", outline(8, 2), 250, ["Countries in Europe"]),
        page(13, "Few Sections", outline(2, 3), 700, ["Mammals of Africa"]),
        page(14, "Short Shallow", outline(3, 1), 40, ["Novels"]),
        {"page_id": 15, "title": "Redirect Page", "ns": 0, "redirect": True, "wikitext": "#REDIRECT [[Deep Article]]"},
        {"page_id": 16, "title": "Talk:Deep Article", "ns": 1, "redirect": False, "wikitext": "Talk text."},
        page(17, "Second Deep", deep, 250, ["Battles of history", "1800 births"]),
        page(18, "Third Deep", deep, 250, ["American physicists", "People from Ulm"]),
        {
            "page_id": 19,
            "title": "Empty Article",
            "ns": 0,
            "redirect": False,
            "wikitext": "{{Infobox}}\n== Refs ==\n{{reflist}}\n[[Category:Stubs]]",
        },
    ]


def write_xml(
    path: Path, pages: Sequence[dict], namespace: str | None = "http://www.mediawiki.org/xml/export-0.10/"
) -> Path:
    xmlns = f' xmlns="{namespace}"' if namespace else ""
    out = [f'<mediawiki{xmlns} version="0.10" xml:lang="en">', "  <siteinfo><sitename>Wikipedia</sitename></siteinfo>"]
    for p in pages:
        redirect = f'    <redirect title="{escape(p["title"])}" />\n' if p["redirect"] else ""
        out.append(
            f"  <page>\n    <title>{escape(p['title'])}</title>\n    <ns>{p['ns']}</ns>\n    <id>{p['page_id']}</id>\n"
            f"{redirect}    <revision>\n      <id>{p['page_id'] * 100}</id>\n"
            f'      <text xml:space="preserve">{escape(p["wikitext"])}</text>\n    </revision>\n  </page>'
        )
    out.append("</mediawiki>\n")
    path.write_text("\n".join(out), encoding="utf-8")
    return path


def write_jsonl(path: Path, pages: Sequence[dict]) -> Path:
    lines = []
    for p in pages:
        row = {
            "title": p["title"],
            "page_id": p["page_id"],
            "wikitext": p["wikitext"],
            "categories": ["ignored"],
            "rev_id": p["page_id"] * 100,
        }
        if p["ns"] != 0:
            row["ns"] = p["ns"]
        lines.append(json.dumps(row, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
