"""Score-based max merge on hand-made lists."""

from __future__ import annotations

from ingest.rewriting.merge import max_merge


def test_worked_example():
    lists = [(0, ["a", "b"], [0.9, 0.5]), (1, ["b", "c"], [0.7, 0.9])]
    assert max_merge(lists) == [("a", 0.9, 0), ("c", 0.9, 1), ("b", 0.7, 1)]


def test_each_document_keeps_its_max_and_the_text_that_gave_it():
    lists = [(0, ["x", "y", "z"], [0.3, 0.2, 0.1]), (2, ["z", "x"], [0.8, 0.25]), (3, ["y"], [0.2])]
    # y: 0.2 from text 0 at rank 2 and from text 3 at rank 1 -> text 3 (smaller MMR rank)
    assert max_merge(lists) == [("z", 0.8, 2), ("x", 0.3, 0), ("y", 0.2, 3)]


def test_ties_by_rank_then_variant_then_doc_and_limit():
    lists = [(1, ["b", "a"], [0.5, 0.5]), (0, ["d", "c"], [0.5, 0.5])]
    assert [d for d, _, _ in max_merge(lists)] == ["d", "b", "c", "a"]  # rank 1: variants 0, 1; rank 2: 0, 1
    many = [(v, [f"d{v}-{i}" for i in range(10)], [1.0 - 0.01 * i - 0.001 * v for i in range(10)]) for v in range(4)]
    merged = max_merge(many, limit=20)
    assert len(merged) == 20 and merged[0] == ("d0-0", 1.0, 0)
    assert [s for _, s, _ in merged] == sorted((s for _, s, _ in merged), reverse=True)


def test_one_text_keeps_its_mmr_order():
    """A strategy's only text: its list as MMR ranked it (scores may rise down the list), cut at the limit;
    two or more texts: the max-score mixing order."""
    from ingest.rewriting.merge import max_merge, merge_texts

    one = [(0, ["a", "b", "c"], [0.5, 0.9, 0.7])]
    assert merge_texts(one) == [("a", 0.5, 0), ("b", 0.9, 0), ("c", 0.7, 0)]
    assert merge_texts(one, limit=2) == [("a", 0.5, 0), ("b", 0.9, 0)]
    assert merge_texts([(3, ["x"], [0.1])]) == [("x", 0.1, 3)]
    two = [(0, ["a", "b"], [0.9, 0.5]), (1, ["b", "c"], [0.7, 0.9])]
    assert merge_texts(two) == max_merge(two) == [("a", 0.9, 0), ("c", 0.9, 1), ("b", 0.7, 1)]
