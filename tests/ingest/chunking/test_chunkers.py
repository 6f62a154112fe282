"""Chunkers: hand cases for each split/merge/window rule, and the stage on hand-made warehouses
(tiling on many random documents, size matching, idempotent reload, prefixes kept or invalidated)."""

from __future__ import annotations

import numpy as np
import pytest

from ingest.chunking.chunkers import (
    ROOT_GROUP,
    Piece,
    fixed_chunks,
    greedy_split,
    merge_small,
    own_segments,
)
from ingest.chunking.tokens import count_tokens
from ingest.structure.segments import Heading, build_sections
from tests.ingest.chunking.chunk_docs import chunks_of, emit, insert_doc, random_paragraph, random_sections


def P(first, end, tokens, section=0, group=ROOT_GROUP):
    return Piece(first, end, tokens, section, group)


# --- pure rules -------------------------------------------------------------------------------------


def test_own_segments_skip_containers_and_stop_at_first_child():
    _, offsets = emit("T", list("abcdef"))
    headings = [Heading(1, "A", 2), Heading(1, "B", 0), Heading(2, "B1", 1), Heading(2, "B2", 2), Heading(1, "C", 1)]
    rows, _ = build_sections(headings, offsets)
    assert own_segments(rows) == [(0, 0, 1), (2, 2, 2), (3, 3, 4), (4, 5, 5)]


def test_greedy_split_fills_up_to_the_limit():
    tokens = np.array([100, 100, 100, 100, 50, 400, 10])
    assert greedy_split(tokens, 0, 3) == [(0, 3, 300)]  # fits whole
    # 100+100+100 = 300, +100 would be 400 > 350 -> cut; 100+50 = 150, +400 -> cut; the 400 sentence alone
    assert greedy_split(tokens, 0, 7) == [(0, 3, 300), (3, 5, 150), (5, 6, 400), (6, 7, 10)]


def test_merge_prefers_the_smaller_neighbour_then_previous():
    assert merge_small([P(0, 1, 200), P(1, 2, 30), P(2, 3, 100)]) == [P(0, 1, 200), P(1, 3, 130)]
    assert merge_small([P(0, 1, 100), P(1, 2, 30), P(2, 3, 100)]) == [P(0, 2, 130), P(2, 3, 100)]  # tie: previous
    # the merged piece takes the section of its larger part (the earlier one on a tie)
    assert merge_small([P(0, 1, 90, 0), P(1, 2, 10, 1)]) == [P(0, 2, 100, 0)]
    assert merge_small([P(0, 1, 10, 0), P(1, 2, 90, 1)]) == [P(0, 2, 100, 1)]
    assert merge_small([P(0, 1, 30, 0), P(1, 2, 30, 1)]) == [P(0, 2, 60, 0)]


def test_merge_respects_the_parent_and_re_examines():
    # different groups never merge, even when small
    lone = [P(0, 1, 200, 0, ROOT_GROUP), P(1, 2, 20, 1, 0), P(2, 3, 200, 2, ROOT_GROUP)]
    assert merge_small(lone) == lone
    # 20 merges with 25 (smaller than 300) -> 45, still < 60, examined again: its only same-group
    # neighbour is the 300 piece (the 30 piece is under another parent)
    chain = [P(0, 1, 300), P(1, 2, 20), P(2, 3, 25), P(3, 4, 30, group=5)]
    assert merge_small(chain) == [P(0, 3, 345), P(3, 4, 30, group=5)]
    # same, with the 30 piece in the group: 45 now merges with the smaller neighbour 30 -> 75
    chain = [P(0, 1, 300), P(1, 2, 20), P(2, 3, 25), P(3, 4, 30)]
    assert merge_small(chain) == [P(0, 1, 300), P(1, 4, 75)]


def test_fixed_windows_snap_to_the_nearest_boundary():
    tokens = np.full(10, 10)
    # W = 100, T = 30 -> n = round(3.33) = 3, ideal edges 33.3 and 66.7 -> boundaries 30 and 70
    assert [(p.first, p.end, p.tokens) for p in fixed_chunks(tokens, 30.0)] == [(0, 3, 30), (3, 7, 40), (7, 10, 30)]
    # tie (ideal 50 between 40 and 60 when sentences are 20 long) goes to the earlier boundary
    assert [(p.first, p.end) for p in fixed_chunks(np.array([20, 20, 20, 20, 20]), 50.0)] == [(0, 2), (2, 5)]
    # one huge sentence cannot be cut: duplicate edges are dropped
    assert [(p.first, p.end) for p in fixed_chunks(np.array([5, 500, 5]), 10.0)] == [(0, 1), (1, 2), (2, 3)]
    assert [(p.first, p.end) for p in fixed_chunks(np.array([7]), 3.0)] == [(0, 1)]
    assert [(p.first, p.end) for p in fixed_chunks(np.array([0, 0]), 0.0)] == [(0, 2)]


# --- the stage on hand-made warehouses ----------------------------------------------------------------


def tile_ok(con) -> list:
    """The design.md tiling check, in Python, over every chunkset and document."""
    bad = []
    body = {
        d: (s, e)
        for d, s, e in con.execute(
            "SELECT doc_id, min(char_start), max(char_end) FROM paragraphs GROUP BY doc_id"
        ).fetchall()
    }
    for chunkset, doc_id, idx, starts, ends in con.execute(
        "SELECT chunkset, doc_id, list(chunk_idx ORDER BY chunk_idx), list(char_start ORDER BY chunk_idx), "
        "list(char_end ORDER BY chunk_idx) FROM chunks GROUP BY ALL"
    ).fetchall():
        ok = (
            idx == list(range(len(idx)))
            and starts[0] == body[doc_id][0]
            and ends[-1] == body[doc_id][1]
            and starts[1:] == ends[:-1]
            and all(s < e for s, e in zip(starts, ends))
        )
        if not ok:
            bad.append((chunkset, doc_id))
    return bad


def test_every_chunkset_tiles_many_random_documents(con):
    from ingest.chunking.stage import chunk_corpus

    rng = np.random.default_rng(11)
    for i in range(40):
        sections = random_sections(rng, int(rng.integers(1, 14)))
        n_par = sum(len(ps) for _, _, ps in sections)
        # an 'induced' structure over the same paragraphs: flat sections of random sizes
        sizes, left = [], n_par
        while left:
            sizes.append(int(rng.integers(1, left + 1)))
            left -= sizes[-1]
        induced = (
            {"induced:texttiling": [Heading(1, f"Segment {k}", s) for k, s in enumerate(sizes)]} if i % 2 else None
        )
        insert_doc(con, f"demo/{i:02d}", f"Doc {i}", sections, extra_structures=induced)
    summary = chunk_corpus(con, show_progress=False)
    assert tile_ok(con) == []
    sets = {r["chunkset"]: r for r in summary["chunksets"]}
    assert sets["doc"]["documents"] == sets["fixed"]["documents"] == sets["structural:gold"]["documents"] == 40
    assert sets["structural:induced:texttiling"]["documents"] == 20
    # stored counts are the tokenizer's counts of the stripped content
    rows = con.execute(
        "SELECT d.text, c.char_start, c.char_end, c.content_tokens FROM chunks c JOIN documents d "
        "USING (doc_id) ORDER BY chunk_id"
    ).fetchall()
    assert count_tokens([t[s:e].strip() for t, s, e, _ in rows]).tolist() == [n for *_, n in rows]
    # every chunk edge is a sentence start or the body end (no chunk cuts a sentence)
    from ingest.chunking.chunkers import body_sentence_starts

    for doc_id, text in con.execute("SELECT doc_id, text FROM documents").fetchall():
        paras = con.execute(
            "SELECT char_start, char_end FROM paragraphs WHERE doc_id = ? ORDER BY para_idx", [doc_id]
        ).fetchall()
        starts = set(body_sentence_starts(text, paras)[0].tolist())
        edges = [s for (s,) in con.execute("SELECT char_start FROM chunks WHERE doc_id = ?", [doc_id]).fetchall()]
        assert set(edges) <= starts


def test_structural_split_and_merge_on_real_tokens(con):
    from ingest.chunking.stage import chunk_corpus

    sentence = "The model maps each word of the input to a vector of numbers."  # 14 tokens
    assert count_tokens([sentence])[0] == 14
    long_para = " ".join([sentence] * 30)  # 420 tokens -> split into 25 sentences (350) + 5 (70)
    short = "Too short to stand alone."  # 6 tokens, merges with a sibling
    sections = [
        (1, "Intro", [" ".join([sentence] * 10)]),  # 140
        (1, "Method", [long_para]),
        (1, "Note", [short]),
        (1, "Outro", [" ".join([sentence] * 8)]),  # 112
    ]
    text = insert_doc(con, "demo/a", "A paper", sections)
    chunk_corpus(con, show_progress=False)
    got = chunks_of(con, "structural:gold", "demo/a")
    # Method: 350 + 70; Note (6) is next to Method's tail (70) and Outro (112): merges with the smaller (70)
    assert [(c["section_idx"], c["content_tokens"]) for c in got] == [(0, 140), (1, 350), (1, 76), (3, 112)]
    assert text[got[2]["char_start"] : got[2]["char_end"]].strip().endswith(short)
    assert got[1]["char_end"] == got[2]["char_start"] and text[got[1]["char_end"] - 1] == " "
    # the separator between paragraphs belongs to the end of the earlier chunk
    assert text[got[0]["char_end"] - 2 : got[0]["char_end"]] == "\n\n"


def test_fixed_windows_match_the_reference_structure(con):
    from ingest.chunking.stage import chunk_corpus

    rng = np.random.default_rng(5)
    for i in range(20):
        insert_doc(con, f"demo/{i:02d}", f"Doc {i}", random_sections(rng, int(rng.integers(2, 12))))
    summary = chunk_corpus(con, show_progress=False)
    per_doc = con.execute(
        "SELECT f.doc_id, f.target_tokens, f.reference_structure, "
        " (SELECT avg(content_tokens) FROM chunks c WHERE c.chunkset = 'structural:gold' AND c.doc_id = f.doc_id), "
        " (SELECT avg(content_tokens) FROM chunks c WHERE c.chunkset = 'fixed' AND c.doc_id = f.doc_id) "
        "FROM chunkset_docs f WHERE f.chunkset = 'fixed'"
    ).fetchall()
    assert len(per_doc) == 20
    for _, target, ref, structural_mean, fixed_mean in per_doc:
        assert ref == "gold" and target == pytest.approx(structural_mean)
        # W / n' with n' = round(W / T) windows unless edges collapse: within one sentence of the target
        assert abs(fixed_mean - target) <= 0.5 * target
    (m,) = summary["size_matching"]
    assert abs(m["mean_fixed"] - m["mean_structural"]) < 4


def test_induced_reference_wins_and_none_without_structure(con):
    from ingest.chunking.stage import chunk_corpus

    rng = np.random.default_rng(9)
    paras = [random_paragraph(rng) for _ in range(6)]
    insert_doc(con, "demo/gold", "G", [(1, "A", paras[:3]), (1, "B", paras[3:])])
    insert_doc(
        con,
        "demo/both",
        "B",
        [(1, "A", paras[:3]), (1, "B", paras[3:])],
        extra_structures={"induced:texttiling": [Heading(1, "S", 6)], "induced:llm": [Heading(1, "L", 6)]},
    )
    text, offsets = emit("N", paras[:2])
    con.execute("INSERT INTO documents VALUES ('demo/none', 'demo', 'N', ?, NULL, NULL, 'x')", [text])
    con.executemany(
        "INSERT INTO paragraphs VALUES ('demo/none', ?, ?, ?)", [[i, s, e] for i, (s, e) in enumerate(offsets)]
    )
    chunk_corpus(con, show_progress=False)
    refs = dict(
        con.execute("SELECT doc_id, reference_structure FROM chunkset_docs WHERE chunkset = 'fixed'").fetchall()
    )
    assert refs == {"demo/gold": "gold", "demo/both": "induced:texttiling"}
    chunk_corpus(con, inducer="llm", show_progress=False)
    refs = dict(
        con.execute("SELECT doc_id, reference_structure FROM chunkset_docs WHERE chunkset = 'fixed'").fetchall()
    )
    assert refs["demo/both"] == "induced:llm"
    sets = con.execute(
        "SELECT doc_id, list(DISTINCT chunkset ORDER BY chunkset) FROM chunks GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert sets == [
        ("demo/both", ["doc", "fixed", "structural:gold", "structural:induced:llm", "structural:induced:texttiling"]),
        ("demo/gold", ["doc", "fixed", "structural:gold"]),
        ("demo/none", ["doc"]),
    ]
    assert con.execute("SELECT reason, n FROM funnel WHERE stage = 'chunk_fixed' ORDER BY reason").fetchall() == [
        ("input", 3),
        ("kept", 2),
        ("no_reference_structure", 1),
    ]
    assert tile_ok(con) == []


def test_rerun_is_identical_and_keeps_unchanged_llm_contexts(con):
    from ingest.chunking.stage import chunk_corpus

    rng = np.random.default_rng(2)
    for i in range(6):
        insert_doc(con, f"demo/{i}", f"Doc {i}", random_sections(rng, 5))
    insert_doc(con, "other/0", "Other", random_sections(rng, 4), corpus="other")
    chunk_corpus(con, show_progress=False)
    tables = ("chunks", "chunkset_docs", "chunk_prefixes", "placebo_paths", "funnel")

    def snapshot():
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}

    first = snapshot()
    fixed_ids = [
        r[0] for r in con.execute("SELECT chunk_id FROM chunks WHERE chunkset = 'fixed' ORDER BY 1").fetchall()
    ]
    con.executemany(
        "INSERT INTO chunk_prefixes VALUES ('fixed', ?, 'llm_context', 0, 'ctx\n\n', 1)", [[c] for c in fixed_ids]
    )
    summary = chunk_corpus(con, corpus="demo", show_progress=False)
    assert summary["llm_context_invalidated"] == 0
    again = snapshot()
    assert {t: r for t, r in again.items() if t != "chunk_prefixes"} == {
        t: r for t, r in first.items() if t != "chunk_prefixes"
    }
    assert con.execute("SELECT count(*) FROM chunk_prefixes WHERE prefix_kind = 'llm_context'").fetchone()[0] == len(
        fixed_ids
    )

    # a new induced structure changes demo/0's fixed windows: its contexts are stale and deleted
    paras = con.execute("SELECT count(*) FROM paragraphs WHERE doc_id = 'demo/0'").fetchone()[0]
    offsets = con.execute(
        "SELECT char_start, char_end FROM paragraphs WHERE doc_id = 'demo/0' ORDER BY para_idx"
    ).fetchall()
    rows, _ = build_sections([Heading(1, "All", paras)], offsets)
    con.execute(
        "INSERT INTO sections VALUES ('induced:texttiling', 'demo/0', 0, NULL, 1, 'All', 0, ?, ?, ?)",
        [paras - 1, rows[0].char_start, rows[0].char_end],
    )
    before = {
        r[0]: r[1:]
        for r in con.execute(
            "SELECT chunk_id, char_start, char_end FROM chunks WHERE chunkset = 'fixed' AND doc_id = 'demo/0'"
        ).fetchall()
    }
    summary = chunk_corpus(con, corpus="demo", show_progress=False)
    after = {
        r[0]: r[1:]
        for r in con.execute(
            "SELECT chunk_id, char_start, char_end FROM chunks WHERE chunkset = 'fixed' AND doc_id = 'demo/0'"
        ).fetchall()
    }
    changed = sum(1 for k, v in before.items() if after.get(k) != v)
    assert changed > 0 and summary["llm_context_invalidated"] == changed
    kept = {
        r[0] for r in con.execute("SELECT chunk_id FROM chunk_prefixes WHERE prefix_kind = 'llm_context'").fetchall()
    }
    assert kept == set(fixed_ids) - {k for k, v in before.items() if after.get(k) != v}
    # the other corpus was untouched
    assert con.execute("SELECT count(*) FROM chunks WHERE doc_id = 'other/0'").fetchone()[0] == len(
        [r for r in first["chunks"] if r[2] == "other/0"]
    )


def test_bad_input_is_a_clear_error(con):
    from ingest.chunking.stage import chunk_corpus
    from ingest.errors import IngestError

    assert chunk_corpus(con, show_progress=False)["documents"] == 0  # an empty warehouse is no error
    with pytest.raises(IngestError, match="corpus nope.*no documents"):
        chunk_corpus(con, corpus="nope", show_progress=False)
    con.execute("INSERT INTO documents VALUES ('demo/empty', 'demo', 'E', 'E', NULL, NULL, 'x')")
    with pytest.raises(IngestError, match="demo/empty.*no paragraphs"):
        chunk_corpus(con, show_progress=False)
    assert con.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
