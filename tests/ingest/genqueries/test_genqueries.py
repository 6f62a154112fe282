"""Generated queries: the leakage filter at its thresholds, query cleaning, and seeded span sampling."""

from __future__ import annotations

import pytest

from ingest.corpora.docs import StoredDoc
from ingest.genqueries.leakage import ROUGE_L_MAX, leak_reason, rouge_l_f1, shared_ngrams, tokens
from ingest.genqueries.sampling import QUERY_TYPES, sample_candidates
from ingest.genqueries.stage import clean_query
from ingest.structure.segments import Heading, build_sections


def lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    return table[-1][-1]


# span: 30 tokens; query: 10 tokens sharing an LCS of 7 with no 4 consecutive shared tokens
SPAN = (
    "alpha bravo cx delta echo dx foxtrot golf ex hotel india fx juliet kilo gx lima mike hx november "
    "oscar ix papa quebec jx romeo sierra kx tango uniform lx"
)
QUERY_7 = "alpha bravo zz delta echo yy foxtrot golf xx hotel"  # LCS 7: alpha bravo delta echo foxtrot golf hotel
QUERY_8 = "alpha bravo zz delta echo yy foxtrot golf hotel india"  # LCS 8, longest shared run 2 tokens


def test_rouge_l_by_hand_and_against_lcs():
    q, s = tokens(QUERY_7), tokens(SPAN)
    assert (len(q), len(s), lcs(q, s)) == (10, 30, 7)
    # F1 = 2 * (7/10) * (7/30) / (7/10 + 7/30) = 2 * 7 / (10 + 30) = 0.35
    assert rouge_l_f1(QUERY_7, SPAN) == pytest.approx(0.35)
    assert lcs(tokens(QUERY_8), s) == 8 and rouge_l_f1(QUERY_8, SPAN) == pytest.approx(0.4)


def test_rouge_threshold_is_strictly_greater_than():
    assert ROUGE_L_MAX == 0.35
    assert rouge_l_f1(QUERY_7, SPAN) == 0.35  # exactly at the threshold (the float 2*7/40): kept
    assert leak_reason(QUERY_7, [SPAN]) is None
    assert leak_reason(QUERY_8, [SPAN]) == "rouge_l"


def test_shared_4gram_is_rejected_3gram_is_not():
    span = (
        "After long negotiations that had dragged on through the previous winter and spring, the treaty was "
        "finally signed in the city of Paris in 1783 by both parties and their many allies."
    )
    assert leak_reason("Which agreement concluded in the city of Paris?", [span]) == "shared_4gram"
    assert shared_ngrams("Which agreement concluded in the city of Paris?", span) == {
        ("in", "the", "city", "of"),
        ("the", "city", "of", "paris"),
    }
    assert leak_reason("Which agreement concluded in the city during 1783?", [span]) is None  # 'in the city' = 3-gram
    # tokenization: case and punctuation do not hide a copy
    assert leak_reason("SIGNED, IN THE -- CITY?", [span]) == "shared_4gram"


def test_every_span_is_checked_and_empty_queries_fail():
    a, b = "Rivers flow into the northern sea each spring.", "Mountains rise above the valley floor sharply."
    assert leak_reason("Where do waters go in spring?", [a, b]) is None
    assert leak_reason("What rise above the valley floor?", [a]) is None
    assert leak_reason("What rise above the valley floor?", [a, b]) == "rouge_l"  # the second span catches it
    assert leak_reason("   ?! ", [a]) == "empty"


def test_clean_query():
    assert clean_query('  "Question: Who founded the city?"\nExplanation: ...') == "Who founded the city?"
    assert clean_query("\n\nParaphrased question: ‘When did it end?’") == "When did it end?"
    assert clean_query("   ") == ""


def _doc() -> StoredDoc:
    words = " ".join(f"word{k}" for k in range(45))
    paras = [f"Paragraph {p}. {words}" for p in range(8)] + ["short one"]
    text = "Title\n\n" + "\n\n".join(paras)
    offs, pos = [], len("Title\n\n")
    for p in paras:
        offs.append((pos, pos + len(p)))
        pos += len(p) + 2
    rows, _ = build_sections([Heading(1, "A", 3), Heading(1, "B", 1), Heading(2, "B1", 2), Heading(1, "C", 3)], offs)
    return StoredDoc("wiki/7", "wiki", "Title", text, "f.xml", offs, rows)


def test_sampling_is_seeded_and_follows_the_type_rules():
    doc = _doc()
    cands = sample_candidates(doc, seed=5, per_doc=2)
    assert cands == sample_candidates(doc, seed=5, per_doc=2)
    assert cands != sample_candidates(doc, seed=6, per_doc=2)
    by_type = {t: [c for c in cands if c.query_type == t] for t in QUERY_TYPES}
    assert [len(by_type[t]) for t in QUERY_TYPES] == [2, 2, 2, 2]
    assert by_type["factoid"][0].cand_id == "7-factoid-0"
    long_paras = set(doc.paragraphs[:8])
    for c in by_type["factoid"] + by_type["underspecified"]:
        assert len(c.spans) == 1 and c.spans[0] in long_paras  # the 2-word paragraph is never a span
    tops = [r for r in doc.sections if r.level == 1]

    def top_of(span):
        return next(k for k, r in enumerate(tops) if r.char_start <= span[0] < r.char_end)

    for c in by_type["multihop"]:
        assert len(c.spans) == 2 and c.spans[0] < c.spans[1] and top_of(c.spans[0]) != top_of(c.spans[1])
    for c in by_type["structural"]:
        assert c.spans[0] in {(r.char_start, r.char_end) for r in tops}


def test_the_stage_modules_import_on_their_own():
    """`ragwh generate-queries` imports ingest.genqueries first: no import cycle through ingest.corpora.docs."""
    import subprocess
    import sys

    for module in ("ingest.corpora.docs", "ingest.genqueries", "ingest.chunking.contexts"):
        done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
        assert done.returncode == 0, (module, done.stderr[-500:])


def test_bm25_top1_gold_rate_by_hand(con):
    """The diagnostic's BM25 (bm25s) puts the unit sharing the query's rare terms first; ties go to the first unit."""
    from ingest.genqueries.bm25 import bm25_top1

    text = "T\n\nsolar panels cover the roof\n\nwind turbines on the hill\n\ntidal power from the sea"
    con.execute("INSERT INTO documents VALUES ('w/1', 'w', 'T', ?, NULL, NULL, 'x')", [text])
    starts = [3, 31, 57]
    ends = [30, 56, len(text)]
    con.executemany(
        "INSERT INTO chunks VALUES ('structural:gold', ?, 'w/1', ?, ?, ?, 5, 0)",
        [(f"structural:gold|w/1|{i}", i, s, e) for i, (s, e) in enumerate(zip(starts, ends))],
    )
    con.executemany(
        "INSERT INTO queries VALUES (?, 'w/1', 'w', ?, ?)",
        [
            ("w/q1", "which turbines stand on the hill", "factoid"),  # unit 1: hit
            ("w/q2", "tidal power", "factoid"),  # unit 2, but its evidence is unit 0: miss
            ("w/q3", "nothing shared", "multihop"),
        ],
    )  # no score anywhere: the first unit, a hit
    con.executemany(
        "INSERT INTO evidence VALUES (?, 0, 'w/1', ?, ?, 'generated')",
        [("w/q1", 35, 50), ("w/q2", 5, 20), ("w/q3", 5, 20)],
    )
    report = bm25_top1(con, "w", ["w/q1", "w/q2", "w/q3"])
    assert report["units"] == "structural:gold chunks" and report["n_units"] == 3
    assert report["by_type"] == {
        "factoid": {"queries": 2, "top1_gold_rate": 0.5},
        "multihop": {"queries": 1, "top1_gold_rate": 1.0},
    }
