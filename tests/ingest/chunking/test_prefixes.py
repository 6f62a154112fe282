"""Heading-path prefixes (render, depth cut) and the placebo derangement."""

from __future__ import annotations

import numpy as np

from ingest.chunking.prefixes import SEPARATOR, cut, derange, render, section_paths
from ingest.structure.segments import Heading, build_sections
from tests.ingest.chunking.chunk_docs import emit, insert_doc, random_sections


def test_render_and_cut():
    path = ("Attention Is All You Need", "Model", "Encoder")
    assert SEPARATOR == " \u203a "
    assert render(cut(path, 1)) == "[Attention Is All You Need]\n\n"
    assert render(cut(path, 2)) == "[Attention Is All You Need › Model]\n\n"
    assert render(cut(path, 3)) == "[Attention Is All You Need › Model › Encoder]\n\n"
    assert cut(path[:2], 3) == path[:2]  # a shorter path is kept whole


def test_section_paths_follow_the_tree_and_collapse_whitespace():
    _, offsets = emit("T", ["a", "b", "c", "d"])
    headings = [
        Heading(1, "Intro", 1),
        Heading(1, "Method", 0),
        Heading(2, "Data\n set", 1),
        Heading(3, "Details", 1),
        Heading(2, "Model", 1),
    ]
    rows, _ = build_sections(headings, offsets)
    assert section_paths("  My   Title ", rows) == [
        ("My Title", "Intro"),
        ("My Title", "Method"),
        ("My Title", "Method", "Data set"),
        ("My Title", "Method", "Data set", "Details"),
        ("My Title", "Method", "Model"),
    ]


def test_derangement_is_cross_document_and_deterministic():
    docs = [f"d{i // 3}" for i in range(30)]  # 10 documents, 3 paths each
    perm, same = derange(docs, 1, "gold|x", 2)
    assert sorted(perm.tolist()) == list(range(30))  # a permutation
    assert not same.any() and all(docs[j] != docs[i] for i, j in enumerate(perm))
    again, _ = derange(docs, 1, "gold|x", 2)
    assert again.tolist() == perm.tolist()
    assert derange(docs, 2, "gold|x", 2)[0].tolist() != perm.tolist()  # the seed matters


def test_derangement_residuals_when_one_document_dominates():
    # three paths of 'a', one of 'b': at most one 'a' can receive 'b''s path, so >= 2 stay same-document
    docs = ["a", "a", "a", "b"]
    perm, same = derange(docs, 0, "k", 3)
    assert sorted(perm.tolist()) == [0, 1, 2, 3]
    assert same.tolist() == [docs[j] == docs[i] for i, j in enumerate(perm)]
    assert same.sum() == 2
    assert derange(["a"], 0, "k", 1)[1].tolist() == [True]  # a single pair can only keep its own path


def test_stage_writes_paths_and_placebos(con):
    from ingest.chunking.stage import chunk_corpus

    rng = np.random.default_rng(3)
    for i in range(12):
        insert_doc(con, f"demo/{i}", f"Paper {i}", random_sections(rng, int(rng.integers(2, 9))))
    summary = chunk_corpus(con, show_progress=False)
    rows = con.execute(
        "SELECT c.doc_id, c.section_idx, p.prefix_kind, p.depth, p.prefix, p.prefix_tokens, d.title "
        "FROM chunk_prefixes p JOIN chunks c USING (chunk_id) JOIN documents d USING (doc_id) "
        "WHERE p.prefix_kind <> 'title' ORDER BY p.chunk_id"
    ).fetchall()
    n_chunks = con.execute("SELECT count(*) FROM chunks WHERE chunkset = 'structural:gold'").fetchone()[0]
    assert len(rows) == n_chunks * 3 * 2  # depths 1..3 x (path, placebo)
    titles = con.execute(
        "SELECT c.chunkset, p.depth, p.prefix, d.title FROM chunk_prefixes p JOIN chunks c USING (chunk_id) "
        "JOIN documents d USING (doc_id) WHERE p.prefix_kind = 'title'"
    ).fetchall()
    assert len(titles) == 12 and all(
        cs == "doc" and depth == 0 and prefix == title + " " for cs, depth, prefix, title in titles
    )  # BEIR's title + " " for DOC
    sections = {
        (d, i): (lvl, title, parent)
        for d, i, lvl, title, parent in con.execute(
            "SELECT doc_id, section_idx, level, title, parent_idx FROM sections"
        ).fetchall()
    }
    for doc_id, section_idx, kind, depth, prefix, prefix_tokens, title in rows:
        elements = prefix[1:-3].split(SEPARATOR)
        assert prefix.startswith("[") and prefix.endswith("]\n\n")
        # breadcrumb length: title + section level, cut to depth
        assert len(elements) == min(depth, 1 + sections[(doc_id, section_idx)][0])
        if kind == "path":
            chain, idx = [], section_idx
            while idx is not None:
                chain.insert(0, sections[(doc_id, idx)][1])
                idx = sections[(doc_id, idx)][2]
            assert elements == ([title] + chain)[:depth]
        else:
            assert elements[0] != title  # 12 documents, one title each: always another paper's title
        assert prefix_tokens > 0
    placebo = con.execute("SELECT depth, path, placebo_path, same_document, seed FROM placebo_paths").fetchall()
    assert all(len(p.split(SEPARATOR)) == len(q.split(SEPARATOR)) == depth for depth, p, q, _, _ in placebo)
    assert sum(r["same_document"] for r in summary["placebo"]) == sum(s for *_, s, _ in placebo)
    assert sum(r["pairs"] for r in summary["placebo"]) == len(placebo)
