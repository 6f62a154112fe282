"""The one verification function and the tree builder, on hand-made trees."""

from __future__ import annotations

from dataclasses import replace

from ingest.structure.segments import (
    Heading,
    build_sections,
    flat_to_headings,
    flat_violations,
    normalize_levels,
    verify_sections,
)

# six paragraphs of 10 characters separated by two characters
PARAS = [(i * 12, i * 12 + 10) for i in range(6)]


def tree():
    headings = [
        Heading(1, "Intro", 1),  # para 0
        Heading(1, "Method", 1),  # para 1, then children
        Heading(2, "Data", 2),  # paras 2-3
        Heading(2, "Model", 1),  # para 4
        Heading(1, "Results", 1),  # para 5
    ]
    return build_sections(headings, PARAS)


def test_build_subtree_spans_and_offsets():
    rows, dropped = tree()
    assert dropped == []
    assert [(r.section_idx, r.parent_idx, r.level, r.para_start, r.para_end) for r in rows] == [
        (0, None, 1, 0, 0),
        (1, None, 1, 1, 4),
        (2, 1, 2, 2, 3),
        (3, 1, 2, 4, 4),
        (4, None, 1, 5, 5),
    ]
    assert (rows[1].char_start, rows[1].char_end) == (12, 58)
    assert verify_sections(rows, PARAS) == []


def test_container_heading_starts_with_its_first_child_and_empty_subtrees_drop():
    headings = [
        Heading(1, "A", 2),
        Heading(1, "B", 0),
        Heading(2, "B.1", 2),
        Heading(2, "B.2", 2),
        Heading(1, "Empty", 0),
    ]
    rows, dropped = build_sections(headings, PARAS)
    assert dropped == [4]
    assert (rows[1].para_start, rows[1].para_end) == (2, 5)
    assert rows[2].para_start == 2 and rows[2].parent_idx == 1
    assert verify_sections(rows, PARAS) == []


def test_build_rejects_paragraph_count_mismatch():
    import pytest

    with pytest.raises(ValueError, match="own 5 paragraphs but the document has 6"):
        build_sections([Heading(1, "A", 5)], PARAS)


def test_verify_reports_gap_overlap_bounds_levels_parent_and_offsets():
    rows, _ = tree()
    gap = list(rows)
    gap[4] = replace(rows[4], para_start=5, para_end=5)
    gap[1] = replace(rows[1], para_end=3)
    gap[3] = replace(rows[3], para_end=3, para_start=3)
    problems = verify_sections(gap, PARAS)
    assert any(p.startswith("gap between section 1 and 4") for p in problems)

    overlap = list(rows)
    overlap[4] = replace(rows[4], para_start=4, char_start=PARAS[4][0])
    assert any(p.startswith("overlap between section 1 and 4") for p in verify_sections(overlap, PARAS))

    shifted = list(rows)
    shifted[0] = replace(rows[0], char_end=rows[0].char_end + 1)
    assert "section 0 ('Intro'): char offsets disagree with paragraph table" in verify_sections(shifted, PARAS)

    out = list(rows)
    out[4] = replace(rows[4], para_end=6)
    assert any("out of bounds" in p for p in verify_sections(out, PARAS))

    jump = list(rows)
    jump[2] = replace(rows[2], level=3)
    problems = verify_sections(jump, PARAS)
    assert any("level jumps from 1 to 3" in p for p in problems)

    orphan = list(rows)
    orphan[3] = replace(rows[3], parent_idx=None)
    assert any("parent_idx None, expected 1" in p for p in verify_sections(orphan, PARAS))

    too_deep = [replace(rows[0], level=5)]
    assert any("outside 1..4" in p for p in verify_sections(too_deep, PARAS[:1]))


def test_verify_top_level_must_reach_the_last_paragraph():
    rows, _ = tree()
    assert "top level: last section ends at paragraph 4, not 5" in verify_sections(rows[:4], PARAS[:6])


def test_verify_empty_inputs():
    assert verify_sections([], PARAS) == ["structure has no sections"]
    assert verify_sections([], []) == ["document has no paragraphs"]


def test_normalize_levels_nests_jumps_and_caps_depth():
    heads = [
        Heading(1, "A", 1),
        Heading(3, "B", 1),
        Heading(3, "C", 1),
        Heading(2, "D", 1),
        Heading(3, "E", 1),
        Heading(4, "F", 1),
        Heading(5, "G", 1),
    ]
    fixed, changed = normalize_levels(heads)
    assert [h.level for h in fixed] == [1, 2, 2, 2, 3, 4, 4]
    assert changed == 3
    rows, _ = build_sections(fixed, [(i * 3, i * 3 + 2) for i in range(7)])
    assert verify_sections(rows, [(i * 3, i * 3 + 2) for i in range(7)]) == []


def test_flat_violations_hand_cases():
    assert flat_violations([(1, 1, 2), (2, 3, 4), (1, 5, 6)], 6) == []
    assert flat_violations([], 6) == ["no sections returned"]
    assert flat_violations([(1, 1, 2), (1, 4, 6)], 6) == ["section 2: gap, paragraphs 3..3 belong to no section"]
    assert flat_violations([(1, 1, 3), (1, 3, 6)], 6) == [
        "section 2: overlap, paragraphs 3..3 already belong to the previous section"
    ]
    assert flat_violations([(1, 1, 2), (3, 3, 6)], 6) == [
        "section 2: level jumps from 1 to 3 (may rise by at most one)"
    ]
    assert flat_violations([(2, 1, 6)], 6) == [
        "section 1: first section has level 2, must be 1",
        "section 1: level jumps from 0 to 2 (may rise by at most one)",
    ]
    assert flat_violations([(1, 1, 7)], 6) == [
        "section 1: paragraphs 1..7 invalid (must satisfy 1 <= first <= last <= 6)"
    ]
    assert flat_violations([(1, 1, 4)], 6) == ["paragraphs 5..6 after the last section belong to no section"]


def test_flat_to_headings_round_trip():
    entries = [(1, 1, 2, "A"), (2, 3, 4, "A.1"), (1, 5, 6, "B")]
    rows, _ = build_sections(flat_to_headings(entries), PARAS)
    assert verify_sections(rows, PARAS) == []
    assert [(r.para_start, r.para_end) for r in rows] == [(0, 3), (2, 3), (4, 5)]
